/**
 * An account's learned node durations in Redis, as Lua scripts run atomically:
 * `append` (a process adds the durations its runs saw and tells the others) and `load` (a process
 * starting reads what the fleet learned). Keys of an account (`{fs:<account>}:…`, one cluster slot):
 * - `durations` hash: node (`["<canvasId>","<nodeId>"]` as JSON) → its last durations, a JSON array of ms;
 * - `durations:used` sorted set: node → the order of its last write (`seq`, below), so the least
 *   recently written node is the one forgotten beyond `maxNodes`.
 *
 * `seq` orders every write of the account: one more than the latest, and never below Redis `TIME` in
 * ms, so it goes on rising after Redis lost the keys (a restart without persistence) — a process that
 * loaded up to some `seq` knows that any message with a `seq` no greater is already in what it loaded.
 * It stays below 10^14, exact in cjson's 14 significant digits.
 */

/** Shared head of the scripts: a node's stored durations as a Lua array, the last `keep`. */
const PRELUDE = `
local samples, used = KEYS[1], KEYS[2]
local function stored(node, keep)
  local list = {}
  local text = redis.call('HGET', samples, node)
  if text then
    -- Whatever else is stored under the key (another writer, a hand edit) starts the node afresh.
    local ok, decoded = pcall(cjson.decode, text)
    if ok and type(decoded) == 'table' then
      for _, ms in ipairs(decoded) do
        if type(ms) == 'number' then list[#list + 1] = ms end
      end
    end
  end
  local kept = {}
  for index = math.max(1, #list - keep + 1), #list do kept[#kept + 1] = list[index] end
  return kept
end
`;

/**
 * ARGV: node, canvasId, nodeId, process, channel, window, maxNodes, then the durations (ms) to add.
 * Keeps the node's last `window` durations, forgets the least recently written nodes beyond
 * `maxNodes`, and publishes `{ from, seq, canvasId, nodeId, samplesMs }` on `channel`. Returns `seq`.
 */
export const APPEND_DURATIONS_SCRIPT = `${PRELUDE}
local node, canvasId, nodeId, from, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local window, maxNodes = tonumber(ARGV[6]), tonumber(ARGV[7])
local added = {}
for index = 8, #ARGV do added[#added + 1] = tonumber(ARGV[index]) end
local list = stored(node, window)
for _, ms in ipairs(added) do list[#list + 1] = ms end
local kept = {}
for index = math.max(1, #list - window + 1), #list do kept[#kept + 1] = list[index] end
redis.call('HSET', samples, node, cjson.encode(kept))

local t = redis.call('TIME')
local seq = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local latest = redis.call('ZREVRANGE', used, 0, 0, 'WITHSCORES')
if latest[2] and tonumber(latest[2]) >= seq then seq = tonumber(latest[2]) + 1 end
redis.call('ZADD', used, seq, node)
local excess = redis.call('ZCARD', used) - maxNodes
if excess > 0 then
  for _, old in ipairs(redis.call('ZRANGE', used, 0, excess - 1)) do redis.call('HDEL', samples, old) end
  redis.call('ZREMRANGEBYRANK', used, 0, excess - 1)
end
redis.call('PUBLISH', channel, cjson.encode({ from = from, seq = seq, canvasId = canvasId, nodeId = nodeId, samplesMs = added }))
return seq
`;

/**
 * ARGV: maxNodes, window. The `maxNodes` most recently written nodes, least recent first, each with its
 * last `window` durations: `{ seq, node₁, durations₁ (JSON), node₂, … }`, `seq` the latest write's
 * (0 when there is none).
 */
export const LOAD_DURATIONS_SCRIPT = `${PRELUDE}
local maxNodes, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local nodes = redis.call('ZRANGE', used, -maxNodes, -1)
local latest = redis.call('ZREVRANGE', used, 0, 0, 'WITHSCORES')
local answer = { latest[2] or '0' }
for _, node in ipairs(nodes) do
  local list = stored(node, window)
  if #list > 0 then
    answer[#answer + 1] = node
    answer[#answer + 1] = cjson.encode(list)
  end
end
return answer
`;
