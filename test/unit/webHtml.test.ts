import { escapeHtml, html, jsonBlock } from '../../src/web/html';
import { fmtCredits, fmtDelta, fmtInstant, fmtPercent, fmtValue } from '../../src/web/format';

describe('web html', () => {
  it('escapes every interpolated value unless it is already markup', () => {
    const name = `<script>alert("x")</script> & 'co'`;
    expect(html`<h1 title="${name}">${name}</h1>`.text).toBe(
      '<h1 title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</h1>',
    );
    expect(html`<ul>${['a<b', html`<li>ok</li>`]}</ul>`.text).toBe('<ul>a&lt;b<li>ok</li></ul>');
    expect(html`${null}${undefined}${false}${0}`.text).toBe('0');
    expect(escapeHtml('"')).toBe('&quot;');
  });

  it('a JSON block cannot be closed by the text it carries', () => {
    const block = jsonBlock('c1', { label: '</script><script>alert(1)</script>' }).text;
    expect(block.match(/<\/script>/g)).toHaveLength(1);
    expect(JSON.parse(block.slice(block.indexOf('>') + 1, block.lastIndexOf('<')))).toEqual({ label: '</script><script>alert(1)</script>' });
  });

  it('formats numbers, credits, percentages, gaps and instants', () => {
    expect(fmtValue(1234.5678)).toBe('1,234.57');
    expect(fmtValue(12, 'ms')).toBe('12 ms');
    expect(fmtValue(null)).toBe('—');
    expect(fmtCredits(77)).toBe('77.00 cr');
    expect(fmtPercent(0.5823)).toBe('58.2%');
    expect(fmtDelta(200.7249)).toBe('+200.72');
    expect(fmtDelta(-3)).toBe('−3');
    expect(fmtInstant('2026-11-25T16:01:02.123Z')).toBe('2026-11-25 16:01 UTC');
  });
});
