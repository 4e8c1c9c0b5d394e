/** Statements sent to the database and messages published on the bus, by service (statements.js). */
export interface Counts {
  statements: Record<string, number>;
  messages: Record<string, number>;
}
/** One statement: its service, its text (white space collapsed), and the rows it answered (-1: not yet). */
export interface Statement {
  service: string;
  sql: string;
  rows: number;
}
export function install(): void;
export function counts(): Counts;
export function record(): void;
export function recorded(): Statement[];
