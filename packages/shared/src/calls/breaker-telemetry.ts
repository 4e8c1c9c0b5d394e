import { trace } from '@opentelemetry/api';
import { recordBreakerState, type BreakerState } from '../telemetry/metrics';
import { currentService, runInService } from '../telemetry/service-context';

/** What observeBreaker needs of a circuit breaker (opossum's CircuitBreaker has it). */
export interface ObservableBreaker {
  readonly opened: boolean;
  readonly halfOpen: boolean;
  on(event: 'open' | 'halfOpen' | 'close' | 'fire' | 'reject' | 'timeout', fn: () => void): unknown;
}

/**
 * Makes a breaker visible: vision_breaker_state / vision_breaker_transitions_total for `upstream`,
 * and on the span of every call through it the `breaker.state` attribute; a call the open breaker
 * refuses adds the event `breaker.open` (`call refused`) to the span where it was refused. One line
 * where the breaker is made: observeBreaker(breaker, 'inference').
 */
export function observeBreaker(breaker: ObservableBreaker, upstream: string): void {
  const service = currentService();
  const state = (): BreakerState => (breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed');
  recordBreakerState(upstream, state(), false);
  // State changes can fire from the breaker's timers: count them under the service that owns it.
  const entered = (s: BreakerState) => () => runInService(service, () => recordBreakerState(upstream, s));
  breaker.on('open', entered('open'));
  breaker.on('halfOpen', entered('half_open'));
  breaker.on('close', entered('closed'));
  breaker.on('fire', () => trace.getActiveSpan()?.setAttribute('breaker.state', state()));
  breaker.on('reject', () => recordBreakerRefusal(upstream));
}

/**
 * Marks the current span with a call its open breaker refused (`breaker.state=open`,
 * `error.type=breaker_open`, event `breaker.open`): where work is refused because the breaker is open
 * without calling through it (a creation answered 503 OP-TASK-BREAKER-OPEN).
 */
export function recordBreakerRefusal(upstream: string): void {
  const span = trace.getActiveSpan();
  span?.setAttributes({ 'breaker.state': 'open', 'error.type': 'breaker_open' });
  span?.addEvent('breaker.open', { 'peer.service': upstream, message: 'call refused: breaker open' });
}
