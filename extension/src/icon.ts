import { LabIcon } from '@jupyterlab/ui-components';

/** Sidebar icon: a small backward graph (a root feeding two leaves). */
export const inspectorIcon = new LabIcon({
  name: 'tracegrad:inspector',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
    '<g class="jp-icon3" fill="#616161"><rect x="5.5" y="1" width="5" height="3.5" rx="1"/>' +
    '<rect x="1" y="11.5" width="5" height="3.5" rx="1"/><rect x="10" y="11.5" width="5" height="3.5" rx="1"/>' +
    '<path d="M7.5 4.5h1v3H12v4h-1V8.5H5v3H4v-4h3.5z"/></g></svg>'
});
