/**
 * The account's steps as Lua scripts, each run atomically by Redis (no other client's command between
 * its reads and writes): `grant` (may this process send one request of this class now, or when?),
 * `report` (what an answer said of the account) and `leave` (this process has no demand any more).
 * Every key of an account shares one hash tag, so the scripts also run on a Redis Cluster.
 *
 * Time is Redis `TIME` × `timeScale`, never a process's clock: one clock for the whole fleet, kept from
 * stepping back (a failover to a replica with an earlier clock) by the last time any script saw.
 *
 * State of an account (`{fs:<account>}:…`):
 * - `state` hash: `tat` (the pacer's theoretical arrival time), `pausedUntil` (a 429), `lastNow`,
 *   `epoch` (set when the state is created: a process that knew another epoch sees that Redis lost it),
 *   `capMinute`/`capMinuteUntil` and `capDay`/`capDayUntil` (what the service's headers left),
 *   `limitMinute`/`limitDay` (the service's own limits when lower than configured), `seq`.
 * - `sends` sorted set: one member per request let through, scored by its time (the windows' counts).
 * - `leases` sorted set: process → lease expiry; `demand` hash: process → runs waiting to poll;
 *   `ptat` hash: process → its own pacer (its share of the reads); `rates` hash: process → its minute
 *   numbers (`perMinute:usable:burst:interval`); `otat` hash: process → the pacer of its own lower
 *   limit (entries go once in the past).
 * - `start:<digest>` string, one per start body recently sent: when the next identical start may go
 *   (service.md §2.2). The key is a digest of the canvas and body (variables may hold e-mails and
 *   tokens: never kept in Redis), and it expires once the service's duplicate window is over.
 */

/** Shared head of the scripts: time, pruning and the leases. */
const PRELUDE = `
local state, sends, leases, demand, ptat, rates, otat, mark = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local scale = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * scale
local last = tonumber(redis.call('HGET', state, 'lastNow') or '0')
if now < last then now = last end
redis.call('HSET', state, 'lastNow', now)
local epoch = redis.call('HGET', state, 'epoch')
if not epoch then
  epoch = tostring(now) .. '-' .. tostring(math.random(1000000))
  redis.call('HSET', state, 'epoch', epoch)
end
-- A start's mark lives in real time (PX) until \`at\` on the account's clock has passed.
local function setMark(at)
  redis.call('SET', mark, at, 'PX', math.ceil((at - now) / scale) + 1)
end
local function num(field, default)
  local value = redis.call('HGET', state, field)
  if value then return tonumber(value) end
  return default
end
-- Redis lost the account (a restart without persistence) when a process knew another epoch: what was
-- sent in this window is unknown, so nothing goes for a window rather than a burst into a window the
-- service still counts. Every script that may be the first on the new state checks it, so a report
-- that comes first cannot hide the loss from the grant after it.
local function lost(knownEpoch, pauseMs)
  if knownEpoch ~= '' and knownEpoch ~= epoch and num('resetSeen', 0) == 0 then
    redis.call('HSET', state, 'pausedUntil', math.max(num('pausedUntil', 0), now + pauseMs), 'resetSeen', 1)
  end
end
-- Leases that ran out belong to processes that died (kill -9): their demand and pacer go with them.
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', '(' .. now)
for _, process in ipairs(expired) do
  redis.call('ZREM', leases, process)
  redis.call('HDEL', demand, process)
  redis.call('HDEL', ptat, process)
  redis.call('HDEL', rates, process)
end
`;

/**
 * KEYS: the account's state, sends, leases, demand, ptat, rates and otat, and the start's mark (a
 * key never written when the request is not a start).
 * ARGV: scale, process, class (abort | start | interactive | read), demand, marked ('1' for a start whose mark is KEYS[8]), leaseMs,
 * perMinute, usablePerMinute, minuteWindowMs, perDay, usablePerDay, startsPerDay, dayWindowMs, burst,
 * pacingIntervalMs, dayBurst, duplicateSpacingMs, knownEpoch, resetPauseMs — the numbers
 * of `budgetLimits` (src/budget/limits.ts), so that a fleet spends an account as one process would.
 * Returns { verdict, at, now, epoch, inMinute, inDay }: verdict 1 granted (at = now), 0 wait until
 * `at`, -1 refused (a start the day cannot take; `at` = when the day window frees a request).
 */
export const GRANT_SCRIPT = `${PRELUDE}
local process, class, wanted, marked = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5] == '1'
local leaseMs, perMinute, usableMinute, minuteMs = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local perDay, usableDay, startsDay, dayMs = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local burst, interval, dayBurst = tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local spacing, knownEpoch, resetPauseMs = tonumber(ARGV[17]), ARGV[18], tonumber(ARGV[19])

lost(knownEpoch, resetPauseMs)

-- Processes may be configured with different per-minute limits. The account is paced by the highest
-- of its live processes (the service's headers lower it when the account's real limit is lower); a
-- process configured lower is held to its own limit by a pacer of its own, which slows no other.
redis.call('HSET', rates, process, perMinute .. ':' .. usableMinute .. ':' .. burst .. ':' .. interval)
local ownPerMinute, ownBurst, ownInterval = perMinute, burst, interval
for _, value in ipairs(redis.call('HVALS', rates)) do
  local p, u, b, i = string.match(value, '^([%d.]+):([%d.]+):([%d.]+):([%d.]+)$')
  if p and tonumber(p) > perMinute then perMinute, usableMinute, burst, interval = tonumber(p), tonumber(u), tonumber(b), tonumber(i) end
end
-- Whether a live process is held to a limit of its own below the account's.
local lowered = false
for _, value in ipairs(redis.call('HVALS', rates)) do
  local p = tonumber(string.match(value, '^([%d.]+):') or '0')
  if p < perMinute then lowered = true end
end
-- The reads' pace shared out by demand when some processes cannot take their share (their own limit
-- is lower): each of those gets what its own pace allows, the others share the rest by their demand
-- (water-filling). Returns \`process\`'s interval between reads.
local function sharedOut(process, pace)
  local open = {}
  local flat = redis.call('HGETALL', demand)
  for index = 1, #flat, 2 do
    local cap = math.huge
    local value = redis.call('HGET', rates, flat[index])
    if value then
      local p, i = string.match(value, '^([%d.]+):[%d.]+:[%d.]+:([%d.]+)$')
      if p and tonumber(p) < perMinute then cap = 1 / tonumber(i) end
    end
    open[flat[index]] = { math.max(1, tonumber(flat[index + 1])), cap }
  end
  if open[process] == nil then open[process] = { 1, math.huge } end
  local left = pace
  local settled = true
  repeat
    settled = true
    local weight = 0
    for _, entry in pairs(open) do weight = weight + entry[1] end
    for name, entry in pairs(open) do
      if left * entry[1] / weight > entry[2] then
        if name == process then return 1 / entry[2] end
        left = left - entry[2]
        open[name] = nil
        settled = false
        break
      end
    end
  until settled
  local weight = 0
  for _, entry in pairs(open) do weight = weight + entry[1] end
  return weight / (math.max(left, 1e-9) * open[process][1])
end
local otats = redis.call('HGETALL', otat)
for index = 1, #otats, 2 do
  if tonumber(otats[index + 1]) <= now then redis.call('HDEL', otat, otats[index]) end
end
local mineTat = tonumber(redis.call('HGET', otat, process) or '0')

redis.call('ZREMRANGEBYSCORE', sends, '-inf', '(' .. (now - dayMs))
redis.call('ZADD', leases, now + leaseMs, process)
if class == 'read' then redis.call('HSET', demand, process, math.max(1, wanted)) end

local waitUntil = now
local function notBefore(at) if at > waitUntil then waitUntil = at end end

-- The service's own limits, when its headers named lower ones, lower ours by as much.
local minuteCut = math.max(0, perMinute - num('limitMinute', perMinute))
local dayCut = math.max(0, perDay - num('limitDay', perDay))
local inMinute = redis.call('ZCOUNT', sends, '(' .. (now - minuteMs), '+inf')
local inDay = redis.call('ZCARD', sends)
local function freeAt(count, limit, window)
  -- When the send whose leaving the window brings the count under the limit leaves it.
  local index = math.max(0, count - math.max(1, limit))
  local oldest = redis.call('ZRANGEBYSCORE', sends, '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', index, 1)
  if oldest[2] then return tonumber(oldest[2]) + window end
  return now + window
end
local function within(count, limit, window) if count >= limit then notBefore(freeAt(count, limit, window)) end end

notBefore(num('pausedUntil', 0))
-- The day's bucket (src/budget/day-pacing.ts): real capacity for sporadic use, then what the day
-- sustains — here what is left of the usable day spread over a whole window, a pace that is safe
-- wherever the service's window starts (it rises as old sends leave the window).
local perMs = math.max(0, usableDay - dayCut - inDay) / dayMs
local tokens = dayBurst
local dayAt = num('dayAt', -1)
if dayAt >= 0 then tokens = math.min(dayBurst, num('dayTokens', dayBurst) + math.max(0, now - dayAt) * perMs) end

if class == 'abort' then
  -- service.md §3.5: an execution left running spends credits: aborts skip the pacing and may use the reserve.
  within(inMinute, perMinute - minuteCut, minuteMs)
  within(inDay, perDay - dayCut, dayMs)
  if num('capMinute', 1) <= 0 then notBefore(num('capMinuteUntil', 0)) end
  if num('capDay', 1) <= 0 then notBefore(num('capDayUntil', 0)) end
else
  if class == 'start' then
    if inDay >= startsDay - dayCut then return { -1, math.ceil(freeAt(inDay, startsDay - dayCut, dayMs)), now, epoch, inMinute, inDay } end
  else
    -- Polls and interactive calls never take the reserve, and wait for a whole token of the day.
    within(inDay, usableDay - dayCut, dayMs)
    if tokens < 1 - 1e-9 then
      if perMs > 0 then notBefore(now + (1 - tokens) / perMs) else notBefore(freeAt(inDay, usableDay - dayCut, dayMs)) end
    end
  end
  within(inMinute, usableMinute - minuteCut, minuteMs)
  if num('capMinuteUntil', 0) > now and num('capMinute', 1) <= 0 then notBefore(num('capMinuteUntil', 0)) end
  if class ~= 'start' and num('capDayUntil', 0) > now and num('capDay', 1) <= 0 then notBefore(num('capDayUntil', 0)) end
  -- The pacer (a GCRA of burst requests): no window of minuteMs ever holds more than the usable count.
  local tat = num('tat', 0)
  notBefore(tat - (burst - 1) * interval)
  if ownPerMinute < perMinute then notBefore(mineTat - (ownBurst - 1) * ownInterval) end
  if class == 'read' then
    -- Fair across processes: each process's reads get the share of the pace its waiting runs make of
    -- the fleet's, so every run of the fleet is polled about as often, whichever process holds it.
    local total = 0
    for _, value in ipairs(redis.call('HVALS', demand)) do total = total + tonumber(value) end
    local mine = tonumber(redis.call('HGET', demand, process) or '1')
    -- 10% slack: the shares add up to a little less than the pacer's pace, so the processes seldom race
    -- for the same slot — a race the first to ask would win, whatever its share.
    local share = 1.1 * interval * math.max(1, total) / math.max(1, mine)
    if lowered then share = sharedOut(process, 1 / (1.1 * interval)) end
    local own = tonumber(redis.call('HGET', ptat, process) or '0')
    -- A process alone on the account may burst as the account may; among others, a burst of its own
    -- would let a few-run process bank turns while the many-run ones wait.
    local ownBurst = 1
    if mine >= total then ownBurst = burst end
    notBefore(own - (ownBurst - 1) * share)
    -- A process that came late for its turn (a busy machine, a timer fired late) keeps up to one turn
    -- of it, so a busy process is not read less often than the others for being slow to ask.
    local base = now
    if own > 0 then base = math.max(own, now - share) end
    if waitUntil <= now then redis.call('HSET', ptat, process, base + share) end
  end
  if class == 'start' and marked then notBefore(tonumber(redis.call('GET', mark) or '0')) end
  if waitUntil <= now then
    redis.call('HSET', state, 'tat', math.max(tat, now) + interval)
    if ownPerMinute < perMinute then redis.call('HSET', otat, process, math.max(mineTat, now) + ownInterval) end
  end
end

if waitUntil > now then return { 0, math.ceil(waitUntil), now, epoch, inMinute, inDay } end

local seq = redis.call('HINCRBY', state, 'seq', 1)
redis.call('ZADD', sends, now, tostring(seq) .. ':' .. process)
redis.call('HSET', state, 'dayTokens', tokens - 1, 'dayAt', now)
if num('capMinuteUntil', 0) > now then redis.call('HINCRBY', state, 'capMinute', -1) end
if num('capDayUntil', 0) > now then redis.call('HINCRBY', state, 'capDay', -1) end
if class == 'start' and marked then setMark(now + spacing) end
return { 1, now, now, epoch, inMinute + 1, inDay + 1 }
`;

/**
 * KEYS: as for the grant. ARGV: scale, process, httpStatus ('' when no answer), remainingMinute,
 * remainingDay, limitMinute, limitDay ('' when absent), minuteWindowMs, dayWindowMs, marked ('1' for
 * a start), duplicateSpacingMs, pauseMs, knownEpoch.
 * Returns { now, epoch }.
 */
export const REPORT_SCRIPT = `${PRELUDE}
local status, remMinute, remDay, limMinute, limDay = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local minuteMs, dayMs, marked, spacing, pauseMs = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10] == '1', tonumber(ARGV[11]), tonumber(ARGV[12])
lost(ARGV[13], pauseMs)
-- service.md §2.1: a 429 carries no reset time and windows are fixed minutes: a whole window is enough.
if status == '429' then
  redis.call('HSET', state, 'pausedUntil', math.max(num('pausedUntil', 0), now + pauseMs))
end
-- What the service says is left, the whole account's view (other processes, other clients): at most
-- that many more requests until its window can have turned.
if remMinute ~= '' then redis.call('HSET', state, 'capMinute', tonumber(remMinute), 'capMinuteUntil', now + minuteMs) end
if remDay ~= '' then redis.call('HSET', state, 'capDay', tonumber(remDay), 'capDayUntil', now + minuteMs) end
-- Limits lower than configured are the account's real ones.
if limMinute ~= '' then redis.call('HSET', state, 'limitMinute', tonumber(limMinute)) end
if limDay ~= '' then redis.call('HSET', state, 'limitDay', tonumber(limDay)) end
-- service.md §2.2: an identical start must leave more than 1 s after the last one arrived.
if marked then setMark(math.max(tonumber(redis.call('GET', mark) or '0'), now + spacing)) end
return { now, epoch }
`;

/** ARGV: scale, process, knownEpoch, resetPauseMs. This process has no reads waiting: its share goes to the others at once. */
export const LEAVE_SCRIPT = `${PRELUDE}
local process = ARGV[2]
lost(ARGV[3], tonumber(ARGV[4]))
redis.call('ZREM', leases, process)
redis.call('HDEL', demand, process)
redis.call('HDEL', ptat, process)
redis.call('HDEL', rates, process)
return { now, epoch }
`;
