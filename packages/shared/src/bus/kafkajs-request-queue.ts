import RequestQueue from 'kafkajs/src/network/requestQueue';

/**
 * kafkajs 2.2.4's request queue (one per broker connection) checks its pending requests again on a timer whose delay
 * is `throttledUntil - Date.now()`. With nothing pending and no throttle, `throttledUntil` is -1 and the delay is
 * minus the epoch in ms, which Node runs after 1 ms (and since Node 24 reports as a TimeoutNegativeWarning:
 * tulios/kafkajs#1751). The check then schedules itself again, so from its first answer on every connection wakes its
 * process a thousand times a second for as long as it lives: 20–27 ms of CPU a second per process on an idle
 * deployment, whatever the number of connections.
 *
 * The timer is only needed for requests that wait: behind the in-flight limit (an answer checks the queue again) or
 * behind a broker's throttle (the timer, due when the throttle ends). A request that has to wait is queued by `push`,
 * which schedules the check itself. So with nothing pending this schedules nothing; with requests pending it runs
 * kafkajs's own code, unchanged.
 */
let installed = false;

/** Stops the idle request queues' timers (idempotent); called where a kafkajs client is made. */
export function stopIdleKafkajsRequestChecks(): void {
  if (installed) return;
  installed = true;
  const proto = RequestQueue.prototype;
  const schedule = proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = function (this: RequestQueue): void {
    if (this.pending.length === 0) return;
    schedule.call(this);
  };
}
