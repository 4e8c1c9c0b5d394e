/** 90-day retention (SPEC.md 8): deletes expired tasks' uploaded videos and marks the tasks expired (results deletes frames itself). */
import type { TaskContext } from '../ports';

export async function expireTasks(ctx: TaskContext): Promise<number> {
  let n = 0;
  for (;;) {
    const tasks = await ctx.store.expiredUnmarked(ctx.clock.now(), 100);
    if (tasks.length === 0) return n;
    const keys = tasks.map((t) => t.object_key).filter((k): k is string => Boolean(k));
    if (keys.length) await ctx.objects.delete(keys);
    for (const t of tasks) await ctx.store.markExpired(t.task_id);
    n += tasks.length;
  }
}
