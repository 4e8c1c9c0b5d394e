import type { PixelBox } from '../detection-types';

/**
 * The constant-velocity Kalman filter of a box, as ByteTrack's: the state is the box's centre x, centre
 * y, aspect ratio (width / height) and height, each with its velocity; the noises scale with the box's
 * height. Unlike ByteTrack's (one step per frame), time is continuous: velocities are per second and a
 * prediction covers the time since the last one, its process noise growing with that time, so that a
 * track behaves alike at 5 and at 30 frames a second.
 *
 * Each measured quantity moves only with its own velocity and every noise is diagonal, so the 8 x 8
 * covariance stays block diagonal: four independent 2 x 2 filters (quantity, velocity), which this is,
 * exactly. The state is plain numbers (JSON-safe) so a tracker can be moved between machines.
 */
export interface KalmanState {
  /** [cx, cy, a, h, vcx, vcy, va, vh]; velocities per second. */
  mean: number[];
  /** Per quantity (cx, cy, a, h): [var(q), cov(q, v), var(v)]. */
  cov: number[];
}

export interface KalmanNoise {
  /** Measurement noise: standard deviation of cx, cy, h as a fraction of the height. */
  measure: number;
  /** Process noise of a position per √second, as a fraction of the height. */
  position: number;
  /** Process noise of a velocity (per second) per √second, as a fraction of the height. */
  velocity: number;
  /** Standard deviation of a new track's velocity (per second), as a fraction of its height. */
  initialVelocity: number;
}

/** The aspect ratio's own noises (it is no length: ByteTrack's fixed values, per second). */
const ASPECT = { measure: 1e-1, position: 1e-2, velocity: 1e-5, initialVelocity: 1e-5 };
/**
 * The measurement noise of the aspect ratio of a box that touches the frame's left or right edge: taken almost as
 * measured. A person coming in through the edge has a box the frame clips, widening by several pixels a frame; at
 * the steady noise above the filter's width would lag far behind (at 25 fps, 62 px against a measured 112), and lose
 * its detection to a neighbour's track.
 */
const EDGE_ASPECT_MEASURE = 1e-3;
/** A box this close to the frame's side (pixels) touches it. */
const EDGE_PX = 2;
/** Smallest height and width taken, in pixels (a degenerate box must not divide by zero). */
const MIN_SIDE = 1e-3;

export function boxToMeasurement(b: PixelBox): [number, number, number, number] {
  const w = Math.max(b.x2 - b.x1, MIN_SIDE);
  const h = Math.max(b.y2 - b.y1, MIN_SIDE);
  return [(b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2, w / h, h];
}

export function stateToBox(s: KalmanState): PixelBox {
  const [cx, cy, a, rawH] = s.mean;
  const h = Math.max(rawH, MIN_SIDE);
  const w = Math.max(a, 0) * h;
  return { x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2 };
}

/** Standard deviations of (quantity, velocity) for quantity i of a box of height h. */
function scale(i: number, h: number, measure: number, velocity: number): [number, number] {
  return i === 2 ? [measure, velocity] : [measure * h, velocity * h];
}

export function initiate(box: PixelBox, noise: KalmanNoise): KalmanState {
  const z = boxToMeasurement(box);
  const h = z[3];
  const cov: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [sq, sv] =
      i === 2
        ? [2 * ASPECT.measure, ASPECT.initialVelocity]
        : scale(i, h, 2 * noise.measure, noise.initialVelocity);
    cov.push(sq * sq, 0, sv * sv);
  }
  return { mean: [...z, 0, 0, 0, 0], cov };
}

/**
 * Moves the state `dtS` seconds on (a negative or non-finite time is taken as 0). `freezeHeight` zeroes
 * the height's velocity first (ByteTrack does so for a track not seen in the last frame).
 */
export function predict(s: KalmanState, dtS: number, noise: KalmanNoise, freezeHeight: boolean): KalmanState {
  const dt = Number.isFinite(dtS) && dtS > 0 ? dtS : 0;
  const mean = [...s.mean];
  if (freezeHeight) mean[7] = 0;
  const h = Math.max(mean[3], MIN_SIDE);
  const cov: number[] = [];
  for (let i = 0; i < 4; i++) {
    mean[i] += mean[i + 4] * dt;
    const [pqq, pqv, pvv] = s.cov.slice(3 * i, 3 * i + 3);
    const [sq, sv] =
      i === 2 ? [ASPECT.position, ASPECT.velocity] : scale(i, h, noise.position, noise.velocity);
    cov.push(pqq + 2 * dt * pqv + dt * dt * pvv + sq * sq * dt, pqv + dt * pvv, pvv + sv * sv * dt);
  }
  return { mean, cov };
}

/** Corrects the state with a measured box, of a frame `frameWidth` pixels wide when known. */
export function correct(s: KalmanState, box: PixelBox, noise: KalmanNoise, frameWidth?: number): KalmanState {
  const z = boxToMeasurement(box);
  const atEdge = frameWidth !== undefined && (box.x1 <= EDGE_PX || box.x2 >= frameWidth - EDGE_PX);
  const aspectMeasure = atEdge ? EDGE_ASPECT_MEASURE : ASPECT.measure;
  const h = Math.max(s.mean[3], MIN_SIDE);
  const mean = [...s.mean];
  const cov: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [pqq, pqv, pvv] = s.cov.slice(3 * i, 3 * i + 3);
    const r = i === 2 ? aspectMeasure : noise.measure * h;
    const innovationVar = pqq + r * r;
    const kq = pqq / innovationVar;
    const kv = pqv / innovationVar;
    const y = z[i] - mean[i];
    mean[i] += kq * y;
    mean[i + 4] += kv * y;
    cov.push((1 - kq) * pqq, (1 - kq) * pqv, pvv - kv * pqv);
  }
  return { mean, cov };
}
