import type { Migration } from '@vision/shared';

/**
 * A track's best shot says which rule its box met (docs/EVIDENCE.md): `met` the size rule, `too_small` or
 * `at_edge` the fallback of a track none of whose boxes passed it; and, when its picture could not be taken, why
 * (`reason`, the event pictures' reasons; null: its objects are stored). The rows kept before met the size rule of
 * their time and had their pictures.
 */
export const bestShotRuleMigration: Migration = {
  name: '006_best_shot_rule',
  async up(knex) {
    await knex.raw(`ALTER TABLE analytics_best_shots ADD COLUMN rule text NOT NULL DEFAULT 'met'`);
    await knex.raw('ALTER TABLE analytics_best_shots ADD COLUMN reason text');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE analytics_best_shots DROP COLUMN IF EXISTS reason');
    await knex.raw('ALTER TABLE analytics_best_shots DROP COLUMN IF EXISTS rule');
  },
};
