/**
 * The web console (packages/console): static files served at /console/ from its build output, on the
 * gateway's own origin, before authentication (the pages carry no data; every API call they make
 * sends the user's key as `Authorization: Bearer`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '@vision/shared';

export const CONSOLE_PREFIX = '/console';

/** Scripts, styles, media and connections from this origin only; blob: for local previews and videos. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The console's build output: the configured folder, else packages/console/dist of this checkout. */
export function resolveConsoleDir(configured?: string): string | undefined {
  const dir = configured ?? path.resolve(__dirname, '../../../../packages/console/dist');
  return existsSync(path.join(dir, 'index.html')) ? dir : undefined;
}

export function mountConsole(app: Express, dir: string | undefined): void {
  const router = express.Router();
  router.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  });
  if (dir) {
    router.use(
      express.static(dir, {
        index: 'index.html',
        redirect: true,
        dotfiles: 'ignore',
        // Files keep their names between releases: revalidate each time (cheap 304s with ETags).
        setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
      }),
    );
  }
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return next(
        new ApiError(
          'OP-METHOD-NOT-ALLOWED',
          `${req.method} is not a method of ${req.originalUrl.split('?')[0]}`,
          {
            reason: 'method_not_allowed',
            allow: ['GET'],
          },
        ),
      );
    }
    next(
      new ApiError(
        'OP-NOT-FOUND',
        dir ? `No console file ${req.path}` : 'The console is not built (npm run build)',
      ),
    );
  });
  // Relative asset URLs need the trailing slash ('/console' also matches '/console/' in express).
  app.get(CONSOLE_PREFIX, (req, res, next) => {
    if (req.path !== CONSOLE_PREFIX) return next();
    res.redirect(301, `${CONSOLE_PREFIX}/`);
  });
  app.use(CONSOLE_PREFIX, router);
}
