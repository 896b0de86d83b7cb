/** Markup that is already safe: built by `html`, never from a visitor's or a workspace's text directly. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: every interpolated value is escaped unless it is Html; arrays are joined. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** JSON for a <script type="application/json"> block: `<` escaped so no text can close the element. */
export function jsonBlock(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return new Html(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}
