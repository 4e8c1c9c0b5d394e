/** The console's entry: the key bar, the navigation and a hash router (#/, #/images, #/tasks, #/tasks/ID). */
import { forgetKey, getKey, setKey } from './api.js';
import { fill, h, type Page } from './dom.js';
import { overviewPage } from './pages/overview.js';
import { imagesPage } from './pages/images.js';
import { tasksPage } from './pages/tasks.js';
import { taskPage } from './pages/task.js';
import { answerKeyRequests, registerVideoWorker } from './video-auth.js';

const main = document.getElementById('main') as HTMLElement;
const keyForm = document.getElementById('key-form') as HTMLFormElement;
const keyInput = document.getElementById('key-input') as HTMLInputElement;
const keyState = document.getElementById('key-state') as HTMLElement;
const forget = document.getElementById('key-forget') as HTMLButtonElement;

let leave: (() => void) | undefined;

function pageFor(hash: string): { page: Page; nav: string } {
  const path = hash.replace(/^#/, '') || '/';
  const task = /^\/tasks\/([A-Za-z0-9._:-]{1,64})$/.exec(path);
  if (task) return { page: taskPage(task[1]), nav: 'tasks' };
  if (path === '/images') return { page: imagesPage, nav: 'images' };
  if (path === '/tasks') return { page: tasksPage, nav: 'tasks' };
  return { page: overviewPage, nav: 'overview' };
}

function render(): void {
  leave?.();
  leave = undefined;
  const { page, nav } = pageFor(location.hash);
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a'))
    a.toggleAttribute('aria-current', a.dataset.nav === nav);
  if (!getKey()) {
    fill(
      main,
      h(
        'section',
        { class: 'card welcome' },
        h('h2', {}, 'Paste an API key to start'),
        h(
          'p',
          {},
          'The key stays in this browser tab (sessionStorage) and is sent only as the ',
          h('code', {}, 'Authorization: Bearer'),
          ' header of the API calls this console makes. Create one with ',
          h('code', {}, 'npm run keys -- create --subject NAME'),
          '.',
        ),
      ),
    );
    return;
  }
  main.replaceChildren();
  leave = page(main);
}

function showKeyState(): void {
  const key = getKey();
  keyState.textContent = key ? `key …${key.slice(-4)}` : 'no key';
  forget.hidden = !key;
}

keyForm.addEventListener('submit', (e) => {
  e.preventDefault();
  if (!keyInput.value.trim()) return;
  setKey(keyInput.value);
  keyInput.value = '';
  showKeyState();
  render();
});
forget.addEventListener('click', () => {
  forgetKey();
  showKeyState();
  render();
});
window.addEventListener('hashchange', render);

answerKeyRequests();
void registerVideoWorker();
showKeyState();
render();
