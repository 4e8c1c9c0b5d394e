import { colourOf, formatFrameTime, frameIndexAt, hslToHex, toRect } from '../../src/timeline';

describe('console timeline helpers', () => {
  it('finds the frame with the greatest time <= t', () => {
    const times = [0, 200, 400, 400, 800];
    expect(frameIndexAt(times, -1)).toBe(-1);
    expect(frameIndexAt(times, 0)).toBe(0);
    expect(frameIndexAt(times, 199)).toBe(0);
    expect(frameIndexAt(times, 200)).toBe(1);
    expect(frameIndexAt(times, 401)).toBe(3);
    expect(frameIndexAt(times, 10_000)).toBe(4);
    expect(frameIndexAt([], 5)).toBe(-1);
  });

  it('turns a cxcywh_normalized box into pixels', () => {
    expect(toRect({ cx: 0.5, cy: 0.25, width: 0.2, height: 0.5 }, 640, 480)).toEqual({
      x: 256,
      y: 0,
      width: 128,
      height: 240,
    });
  });

  it('gives an id one colour, and nearby track numbers different ones', () => {
    expect(colourOf('track:7')).toBe(colourOf('track:7'));
    expect(colourOf('person')).toMatch(/^#[0-9a-f]{6}$/);
    const tracks = ['1', '2', '3', '4', '5'].map((n) => colourOf(`track:${n}`));
    expect(new Set(tracks).size).toBe(5);
    expect(hslToHex(0, 1, 0.5)).toBe('#ff0000');
    expect(hslToHex(120, 1, 0.5)).toBe('#00ff00');
  });

  it('formats PTS offsets and Unix times', () => {
    expect(formatFrameTime(61_234)).toBe('1:01.234');
    expect(formatFrameTime(0)).toBe('0:00.000');
    expect(formatFrameTime(Date.UTC(2026, 0, 1))).not.toContain(':00.000');
  });
});
