/** The message the service worker sends a page to ask for the API key (answered on the given port). */
export const KEY_REQUEST = 'vision-console-key-request';
