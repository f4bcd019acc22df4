import type { Subject } from './reply.js';

/** Thrown by the app when the connection must be dropped: the HTTP shell destroys the socket. */
export class ConnectionDropped extends Error {
  override readonly name = 'ConnectionDropped';
  readonly subject: Subject;

  constructor(subject: Subject = {}) {
    super('connection dropped by the emulator');
    this.subject = subject;
  }
}
