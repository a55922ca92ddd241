/** Package entry: the sidebar plugin. The MIME renderers are the separate `mimeExtension` entry (mime.ts). */
export { default } from './plugin';
