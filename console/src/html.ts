/** `html` tagged templates render preact elements: no JSX, no build step beyond esbuild's bundling. */
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
