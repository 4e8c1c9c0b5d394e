/** The quota hold id of attempt `attempt` (0 first) of call `taskId`: a take-over never reuses a hold. */
export function holdIdFor(taskId: string, attempt: number): string {
  return attempt === 0 ? taskId : `${taskId}-r${attempt}`;
}
