import { ConfigError } from '../../src/config/config';
import { parseServiceRoles } from '../../src/db/db-logins';

const SCHEMAS = ['gateway', 'tasks', 'quota', 'results', 'images'];

describe('DATABASE_SERVICE_ROLES', () => {
  it('maps each schema to its own login', () => {
    expect(parseServiceRoles(' gateway:vision_gateway, images:vision_images ', SCHEMAS)).toEqual({
      gateway: 'vision_gateway',
      images: 'vision_images',
    });
    expect(parseServiceRoles('', SCHEMAS)).toEqual({});
    expect(parseServiceRoles(undefined, SCHEMAS)).toEqual({});
  });

  it.each([
    ['an unknown schema', 'public:vision_public'],
    ['a role that is not a plain lower-case name', 'images:"vision"; drop table x'],
    ['a missing role', 'images'],
    ['an extra field', 'images:vision_images:x'],
    ['one role for two schemas', 'images:vision_svc,tasks:vision_svc'],
    ['a schema named twice', 'images:vision_a,images:vision_b'],
  ])('refuses %s', (_what, value) => {
    expect(() => parseServiceRoles(value, SCHEMAS)).toThrow(ConfigError);
  });
});
