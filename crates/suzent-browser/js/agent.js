// @ts-check
// Suzent's in-page agent. It runs in a world the page's own scripts cannot reach (a CDP isolated
// world, or the extension's content-script world) and offers a fixed set of functions, called by
// name with JSON arguments through `globalThis.__suzentAgent.call(name, args)`:
//   snapshot, act, scrollPage, frameRect, announceFrames, frameSlot, pageInfo
// (see crates/suzent-browser/CONTRACT.md for their arguments and results). It never evaluates
// text it is given. Rust embeds this file (`AGENT_JS`); the extension bundles the same file.
(function () {
  'use strict';
  /** @type {any} */
  const g = globalThis;
  if (g.__suzentAgent) {
    return;
  }

  /**
   * @typedef {{depth: number, role: string, name: string, index?: number, value?: string,
   *   props?: string[], href?: string, slot?: number, note?: string}} SnapNode
   * @typedef {{id: string, elements: Element[], frames: Element[]}} SnapshotState
   */

  /** The latest snapshot of this document: its id, its elements by index, its iframes by slot.
   * @type {SnapshotState} */
  let current = { id: '', elements: [], frames: [] };
  /** Slots announced by the parent frame, by token. @type {Map<string, number>} */
  const slotsByToken = new Map();

  window.addEventListener('message', (event) => {
    // Only the parent frame's announcements count; the first one for a token wins.
    if (window.parent === window || event.source !== window.parent) {
      return;
    }
    const data = event.data;
    if (
      data &&
      typeof data === 'object' &&
      typeof data.suzentFrame === 'string' &&
      typeof data.slot === 'number' &&
      !slotsByToken.has(data.suzentFrame)
    ) {
      if (slotsByToken.size > 64) {
        slotsByToken.clear();
      }
      slotsByToken.set(data.suzentFrame, data.slot);
    }
  });

  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'textbox', 'searchbox', 'combobox', 'listbox', 'slider',
    'spinbutton', 'treeitem', 'gridcell',
  ]);
  const SKIP_TAGS = new Set([
    'SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'SVG', 'PATH',
  ]);
  const TEXT_INPUTS = new Set(['text', 'email', 'search', 'tel', 'url', 'number', 'password',
    'date', 'datetime-local', 'month', 'time', 'week', '']);

  /** @param {string} text @param {number} max */
  function clip(text, max) {
    const t = text.replace(/\s+/g, ' ').trim();
    return t.length > max ? t.slice(0, Math.max(0, max - 1)) + '…' : t;
  }

  /** The implicit or explicit role of an element. @param {Element} el */
  function roleOf(el) {
    const explicit = el.getAttribute('role');
    if (explicit) {
      return explicit.split(/\s+/)[0].toLowerCase();
    }
    const tag = el.tagName;
    switch (tag) {
      case 'A':
      case 'AREA':
        return el.hasAttribute('href') ? 'link' : '';
      case 'BUTTON':
        return 'button';
      case 'SUMMARY':
        return 'button';
      case 'SELECT':
        return /** @type {HTMLSelectElement} */ (el).multiple ? 'listbox' : 'combobox';
      case 'TEXTAREA':
        return 'textbox';
      case 'IMG':
        return el.getAttribute('alt') ? 'img' : '';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6':
        return 'heading';
      case 'IFRAME':
      case 'FRAME':
        return 'iframe';
      case 'INPUT': {
        const type = (el.getAttribute('type') || '').toLowerCase();
        if (type === 'hidden') return '';
        if (type === 'checkbox') return 'checkbox';
        if (type === 'radio') return 'radio';
        if (type === 'range') return 'slider';
        if (type === 'search') return 'searchbox';
        if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image') {
          return 'button';
        }
        if (type === 'file') return 'button';
        return 'textbox';
      }
      default:
        break;
    }
    if (el instanceof HTMLElement && el.isContentEditable &&
        !(el.parentElement && el.parentElement.isContentEditable)) {
      return 'textbox';
    }
    return '';
  }

  /** @param {Element} el @param {string} role */
  function isInteractive(el, role) {
    if (INTERACTIVE_ROLES.has(role)) {
      return true;
    }
    if (el.hasAttribute('onclick')) {
      return true;
    }
    const tabindex = el.getAttribute('tabindex');
    return tabindex !== null && Number(tabindex) >= 0 && el.tagName !== 'IFRAME';
  }

  /** Text of the elements an `aria-labelledby` names. @param {Element} el */
  function labelledBy(el) {
    const ids = el.getAttribute('aria-labelledby');
    if (!ids) return '';
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    return ids.split(/\s+/)
      .map((id) => (root.getElementById ? root.getElementById(id) : null))
      .map((n) => (n ? n.textContent || '' : ''))
      .join(' ');
  }

  /** A label's own text, without the text of the controls inside it (a select's options).
   * @param {Element} label */
  function labelText(label) {
    let out = '';
    /** @param {Node} n */
    const walk = (n) => {
      if (n.nodeType === Node.TEXT_NODE) {
        out += n.textContent;
        return;
      }
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      const tag = /** @type {Element} */ (n).tagName;
      if (tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'INPUT' || tag === 'BUTTON' ||
          SKIP_TAGS.has(tag)) {
        return;
      }
      for (const k of Array.from(n.childNodes)) walk(k);
    };
    walk(label);
    return out;
  }

  /** The accessible name (a practical subset of the algorithm). @param {Element} el
   * @param {string} role */
  function nameOf(el, role) {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return aria;
    const lb = labelledBy(el);
    if (lb.trim()) return lb;
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      const input = /** @type {HTMLInputElement} */ (el);
      if (input.labels && input.labels.length > 0) {
        const text = Array.from(input.labels).map(labelText).join(' ');
        if (text.trim()) return text;
      }
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'submit' || type === 'button' || type === 'reset') {
        return input.value || (type === 'submit' ? 'Submit' : '');
      }
      if (type === 'image') return el.getAttribute('alt') || 'Submit';
      return el.getAttribute('placeholder') || el.getAttribute('title') ||
        el.getAttribute('name') || '';
    }
    if (tag === 'IMG') return el.getAttribute('alt') || '';
    if (tag === 'IFRAME' || tag === 'FRAME') {
      return el.getAttribute('title') || el.getAttribute('name') || '';
    }
    const text = composedText(el);
    if (text.trim()) return text;
    return el.getAttribute('title') || (role === 'img' ? el.getAttribute('alt') || '' : '');
  }

  /** Text content including open shadow roots (what a user sees inside a button).
   * @param {Node} node */
  function composedText(node) {
    let out = '';
    /** @param {Node} n */
    const walk = (n) => {
      if (out.length > 400) return;
      if (n.nodeType === Node.TEXT_NODE) {
        out += n.textContent;
        return;
      }
      if (n.nodeType !== Node.ELEMENT_NODE && n.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
      const el = /** @type {Element} */ (n);
      if (n.nodeType === Node.ELEMENT_NODE && SKIP_TAGS.has(el.tagName)) return;
      if (n.nodeType === Node.ELEMENT_NODE && el.tagName === 'SLOT') {
        const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes({ flatten: true });
        for (const a of (assigned.length ? assigned : Array.from(el.childNodes))) walk(a);
        return;
      }
      const root = n.nodeType === Node.ELEMENT_NODE ? openRoot(el) : null;
      const kids = root ? root.childNodes : n.childNodes;
      for (const k of Array.from(kids)) walk(k);
      if (n.nodeType === Node.ELEMENT_NODE && (el.tagName === 'IMG')) {
        out += ' ' + (el.getAttribute('alt') || '');
      }
    };
    walk(node);
    return out;
  }

  /** An element's shadow root when the agent may read it: open roots, or any root through
   * the extension's `chrome.dom.openOrClosedShadowRoot`. @param {Element} el
   * @returns {ShadowRoot | null} */
  function openRoot(el) {
    const c = g.chrome;
    if (c && c.dom && typeof c.dom.openOrClosedShadowRoot === 'function') {
      try {
        return c.dom.openOrClosedShadowRoot(el) || null;
      } catch (_) {
        return el.shadowRoot;
      }
    }
    return el.shadowRoot;
  }

  /** Whether an element is rendered (not `display: none`, not hidden, has a box or is
   * `display: contents`). @param {Element} el */
  function isRendered(el) {
    if (el.getAttribute('aria-hidden') === 'true') return false;
    if (typeof el.checkVisibility === 'function') {
      if (el.checkVisibility({ visibilityProperty: true })) return true;
      return getComputedStyle(el).display === 'contents';
    }
    const style = getComputedStyle(el);
    return style.display !== 'none' && style.visibility !== 'hidden';
  }

  /** A host whose closed shadow root the agent cannot read: a custom element with no readable
   * root and no light children, that still renders a box. @param {Element} el */
  function looksClosedHost(el) {
    if (!el.tagName.includes('-') || openRoot(el) || el.childElementCount > 0) return false;
    if ((el.textContent || '').trim()) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }

  /** @param {Element} el @param {string} role */
  function propsOf(el, role) {
    /** @type {string[]} */
    const props = [];
    const input = /** @type {HTMLInputElement} */ (el);
    if (role === 'heading') {
      const level = el.getAttribute('aria-level') || el.tagName.slice(1);
      props.push('level=' + level);
    }
    if ((el.tagName === 'INPUT' && (input.type === 'checkbox' || input.type === 'radio'))) {
      if (input.checked) props.push('checked');
    } else if (el.getAttribute('aria-checked') === 'true') {
      props.push('checked');
    }
    if (el.getAttribute('aria-selected') === 'true') props.push('selected');
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true') props.push('expanded');
    if (expanded === 'false') props.push('collapsed');
    if (/** @type {any} */ (el).disabled || el.getAttribute('aria-disabled') === 'true') {
      props.push('disabled');
    }
    if (/** @type {any} */ (el).required) props.push('required');
    if (el.tagName === 'INPUT') {
      const type = input.type;
      if (type === 'password') props.push('password');
      if (type === 'file') props.push('type=file');
      if (/** @type {any} */ (el).readOnly) props.push('readonly');
    }
    return props;
  }

  /** The value shown for a field; never a password's. @param {Element} el @param {number} max */
  function valueOf(el, max) {
    if (el.tagName === 'INPUT') {
      const input = /** @type {HTMLInputElement} */ (el);
      const type = input.type;
      if (type === 'password') return input.value ? '••••' : undefined;
      if (type === 'file' || type === 'checkbox' || type === 'radio' || type === 'submit' ||
          type === 'button' || type === 'reset' || type === 'image') {
        return undefined;
      }
      return input.value ? clip(input.value, max) : undefined;
    }
    if (el.tagName === 'TEXTAREA') {
      const v = /** @type {HTMLTextAreaElement} */ (el).value;
      return v ? clip(v, max) : undefined;
    }
    if (el.tagName === 'SELECT') {
      const sel = /** @type {HTMLSelectElement} */ (el);
      const chosen = Array.from(sel.selectedOptions).map((o) => o.label || o.text);
      return chosen.length ? clip(chosen.join(', '), max) : undefined;
    }
    return undefined;
  }

  /** snapshot({snapshotId, maxText}) -> {url, title, nodes, frameSlots, elements}
   * @param {any} args */
  function snapshot(args) {
    const id = String(args.snapshotId || '');
    const max = Math.max(8, Math.min(Number(args.maxText) || 100, 2000));
    /** @type {SnapNode[]} */
    const nodes = [];
    /** @type {Element[]} */
    const elements = [];
    /** @type {Element[]} */
    const frames = [];
    let visited = 0;

    /** @param {Node} node @param {number} depth @param {boolean} quiet */
    function walkChildren(node, depth, quiet) {
      let text = '';
      const flush = () => {
        if (!quiet) {
          const t = clip(text, max);
          if (t) nodes.push({ depth, role: 'text', name: t });
        }
        text = '';
      };
      /** @type {ArrayLike<Node>} */
      let kids = node.childNodes;
      if (node.nodeType === Node.ELEMENT_NODE && /** @type {Element} */ (node).tagName === 'SLOT') {
        const assigned = /** @type {HTMLSlotElement} */ (node).assignedNodes({ flatten: true });
        if (assigned.length) kids = assigned;
      }
      for (let i = 0; i < kids.length; i++) {
        const k = kids[i];
        if (k.nodeType === Node.TEXT_NODE) {
          text += k.textContent;
          continue;
        }
        if (k.nodeType !== Node.ELEMENT_NODE) continue;
        if (text.trim()) flush(); else text = '';
        walkElement(/** @type {Element} */ (k), depth, quiet);
      }
      if (text.trim()) flush();
    }

    /** @param {Element} el @param {number} depth @param {boolean} quiet */
    function walkElement(el, depth, quiet) {
      visited++;
      if (SKIP_TAGS.has(el.tagName.toUpperCase())) return;
      if (!isRendered(el)) return;
      const role = roleOf(el);
      if (role === 'iframe') {
        const slot = frames.length;
        frames.push(el);
        let href = el.getAttribute('src') || '';
        try {
          href = href ? new URL(href, document.baseURI).href : 'about:blank';
        } catch (_) { /* keep as written */ }
        nodes.push({ depth, role: 'iframe', name: clip(nameOf(el, role), max), href, slot });
        return;
      }
      const interactive = isInteractive(el, role);
      let childDepth = depth;
      if (interactive) {
        /** @type {SnapNode} */
        const node = {
          depth,
          role: role || 'clickable',
          name: clip(nameOf(el, role), max),
          index: elements.length,
        };
        elements.push(el);
        const value = valueOf(el, max);
        if (value !== undefined) node.value = value;
        const props = propsOf(el, role);
        if (props.length) node.props = props;
        if (role === 'link') {
          const a = /** @type {HTMLAnchorElement} */ (el);
          if (a.href) node.href = a.href;
        }
        nodes.push(node);
        childDepth = depth + 1;
        quiet = true;
      } else if (role === 'heading' || role === 'img') {
        if (!quiet) {
          const node = { depth, role, name: clip(nameOf(el, role), max) };
          const props = propsOf(el, role);
          if (props.length) /** @type {SnapNode} */ (node).props = props;
          nodes.push(node);
        }
        if (role === 'heading') return;
      }
      const root = openRoot(el);
      if (root) {
        walkChildren(root, childDepth, quiet);
        return;
      }
      if (looksClosedHost(el)) {
        nodes.push({
          depth,
          role: el.tagName.toLowerCase(),
          name: '',
          note: 'closed shadow root (not reachable)',
        });
        return;
      }
      if (el.tagName === 'SELECT') return;
      // A label's text is the name of its control: not repeated as text.
      const labelsControl = el.tagName === 'LABEL' &&
        /** @type {HTMLLabelElement} */ (el).control !== null;
      walkChildren(el, childDepth, quiet || labelsControl);
    }

    const body = document.body || document.documentElement;
    if (body) walkChildren(body, 0, false);
    current = { id, elements, frames };
    return {
      url: location.href,
      title: document.title,
      nodes,
      frameSlots: frames.length,
      elements: visited,
    };
  }

  /** The element of the latest snapshot, or an error result. @param {any} args
   * @returns {{el?: Element, error?: any}} */
  function elementFor(args) {
    if (!current.id || String(args.snapshotId) !== current.id) {
      return { error: { error: 'stale ref — take a new snapshot', code: 'stale' } };
    }
    const el = current.elements[Number(args.index)];
    if (!el || !el.isConnected) {
      return { error: { error: 'stale ref — take a new snapshot', code: 'stale' } };
    }
    return { el };
  }

  /** @param {Element} el */
  function describe(el) {
    const role = roleOf(el) || el.tagName.toLowerCase();
    const name = clip(nameOf(el, role), 60);
    return name ? role + ' "' + name + '"' : role;
  }

  /** Whether `hit` is `el` or inside it, across shadow boundaries. @param {Element} el
   * @param {Node | null} hit */
  function containsComposed(el, hit) {
    /** @type {Node | null} */
    let n = hit;
    while (n) {
      if (n === el) return true;
      const parent = n.parentNode;
      if (parent) {
        n = parent;
      } else if (n instanceof ShadowRoot) {
        n = n.host;
      } else {
        return false;
      }
    }
    return false;
  }

  /** The deepest element at a point, through open shadow roots. @param {number} x
   * @param {number} y */
  function deepElementFromPoint(x, y) {
    /** @type {Element | null} */
    let hit = document.elementFromPoint(x, y);
    for (let i = 0; i < 32 && hit; i++) {
      const root = openRoot(hit);
      if (!root) break;
      const inner = root.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  /** Sets a form control's value the way typing does (native setter, then events).
   * @param {HTMLInputElement | HTMLTextAreaElement} el @param {string} value */
  function setValue(el, value) {
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype
      : HTMLInputElement.prototype;
    const desc = Object.getOwnPropertyDescriptor(proto, 'value');
    if (desc && desc.set) {
      desc.set.call(el, value);
    } else {
      el.value = value;
    }
  }

  /** act({snapshotId, index, action, value, dx, dy}) -> {point?, element?, info?} or error
   * @param {any} args */
  function act(args) {
    const found = elementFor(args);
    if (found.error) return found.error;
    const el = /** @type {Element} */ (found.el);
    const element = describe(el);
    const action = String(args.action);
    if (action === 'point') {
      const r0 = el.getBoundingClientRect();
      if (args.noScroll !== true) {
        // Inside a frame: the least movement, so that the parents (already showing the
        // frame) need not scroll across processes.
        const where = window.parent === window ? 'center' : 'nearest';
        el.scrollIntoView({ block: where, inline: where, behavior: 'instant' });
      }
      const rects = el.getClientRects();
      const r = el.getBoundingClientRect();
      const scrolled = r.top !== r0.top || r.left !== r0.left;
      if (rects.length === 0 || r.width === 0 || r.height === 0) {
        return { element, error: element + ' is not visible', code: 'hidden' };
      }
      // The center of the first box that is on screen (links wrap over lines).
      let box = r;
      for (const rect of Array.from(rects)) {
        if (rect.width > 0 && rect.height > 0) { box = rect; break; }
      }
      const x = Math.min(Math.max(box.left + box.width / 2, 0), window.innerWidth - 1);
      const y = Math.min(Math.max(box.top + box.height / 2, 0), window.innerHeight - 1);
      const hit = deepElementFromPoint(x, y);
      if (!containsComposed(el, hit) && !(hit && el instanceof HTMLElement &&
          /** @type {any} */ (hit).control === el)) {
        const by = hit ? describe(hit) : 'nothing';
        return { element, error: element + ' is covered by ' + by, code: 'covered' };
      }
      return { element, point: { x, y }, scrolled };
    }
    if (action === 'focus') {
      if (el instanceof HTMLElement) {
        el.focus({ preventScroll: false });
      }
      return { element, info: 'focused' };
    }
    if (action === 'scroll') {
      /** @type {Element | null} */
      let target = el;
      while (target && !(target.scrollHeight > target.clientHeight ||
          target.scrollWidth > target.clientWidth)) {
        target = target.parentElement;
      }
      const s = target || document.scrollingElement || document.documentElement;
      s.scrollBy({ left: Number(args.dx) || 0, top: Number(args.dy) || 0, behavior: 'instant' });
      return { element, info: 'scrolled to ' + Math.round(s.scrollLeft) + ',' + Math.round(s.scrollTop) };
    }
    if (action === 'fill') {
      const value = String(args.value === undefined || args.value === null ? '' : args.value);
      if (/** @type {any} */ (el).disabled) {
        return { element, error: element + ' is disabled', code: 'disabled' };
      }
      if (el.tagName === 'INPUT') {
        const input = /** @type {HTMLInputElement} */ (el);
        const type = input.type;
        if (type === 'file') {
          return {
            element,
            error: 'file upload not supported: browser_action cannot put files into file inputs',
            code: 'file_input',
          };
        }
        if (type === 'checkbox' || type === 'radio' || !TEXT_INPUTS.has(type) && type !== 'color' && type !== 'range') {
          return { element, error: element + ' takes no text: use click', code: 'not_editable' };
        }
        if (input.readOnly) {
          return { element, error: element + ' is read-only', code: 'not_editable' };
        }
        input.focus();
        setValue(input, value);
      } else if (el.tagName === 'TEXTAREA') {
        const area = /** @type {HTMLTextAreaElement} */ (el);
        if (area.readOnly) return { element, error: element + ' is read-only', code: 'not_editable' };
        area.focus();
        setValue(area, value);
      } else if (el.tagName === 'SELECT') {
        const sel = /** @type {HTMLSelectElement} */ (el);
        const option = Array.from(sel.options).find((o) => o.value === value) ||
          Array.from(sel.options).find((o) => (o.label || o.text).trim() === value.trim());
        if (!option) {
          const labels = Array.from(sel.options).map((o) => o.label || o.text).slice(0, 20);
          return { element, error: 'no option "' + value + '" in ' + element + ' (options: ' + labels.join(', ') + ')', code: 'no_option' };
        }
        sel.value = option.value;
      } else if (el instanceof HTMLElement && el.isContentEditable) {
        el.focus();
        el.textContent = value;
      } else {
        return { element, error: element + ' is not a text field', code: 'not_editable' };
      }
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return { element, info: 'value set' };
    }
    return { error: 'unknown action ' + action, code: 'bad_args' };
  }

  /** scrollPage({dx, dy}) -> {x, y, maxX, maxY, viewWidth, viewHeight} @param {any} args */
  function scrollPage(args) {
    const s = document.scrollingElement || document.documentElement;
    window.scrollBy({ left: Number(args.dx) || 0, top: Number(args.dy) || 0, behavior: 'instant' });
    return {
      x: window.scrollX,
      y: window.scrollY,
      maxX: Math.max(0, s.scrollWidth - window.innerWidth),
      maxY: Math.max(0, s.scrollHeight - window.innerHeight),
      viewWidth: window.innerWidth,
      viewHeight: window.innerHeight,
    };
  }

  /** frameRect({snapshotId, slot}) -> {x, y, width, height}: the iframe's content box.
   * @param {any} args */
  function frameRect(args) {
    if (!current.id || String(args.snapshotId) !== current.id) {
      return { error: 'stale ref — take a new snapshot', code: 'stale' };
    }
    const el = current.frames[Number(args.slot)];
    if (!el || !el.isConnected) {
      return { error: 'stale ref — take a new snapshot', code: 'stale' };
    }
    const r0 = el.getBoundingClientRect();
    if (args.reveal === true) {
      el.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    }
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    const left = el.clientLeft + (parseFloat(style.paddingLeft) || 0);
    const top = el.clientTop + (parseFloat(style.paddingTop) || 0);
    return {
      x: r.left + left,
      y: r.top + top,
      width: el.clientWidth,
      height: el.clientHeight,
      scrolled: r.top !== r0.top || r.left !== r0.left,
    };
  }

  /** announceFrames({snapshotId, token}) -> {posted} @param {any} args */
  function announceFrames(args) {
    if (String(args.snapshotId) !== current.id) {
      return { error: 'stale ref — take a new snapshot', code: 'stale' };
    }
    const token = String(args.token);
    let posted = 0;
    current.frames.forEach((el, slot) => {
      const win = /** @type {HTMLIFrameElement} */ (el).contentWindow;
      if (win) {
        win.postMessage({ suzentFrame: token, slot }, '*');
        posted++;
      }
    });
    return { posted };
  }

  /** frameSlot({token}) -> {slot} @param {any} args */
  function frameSlot(args) {
    const slot = slotsByToken.get(String(args.token));
    return { slot: slot === undefined ? null : slot };
  }

  /** pageInfo() -> {url, title, readyState} */
  function pageInfo() {
    return { url: location.href, title: document.title, readyState: document.readyState };
  }

  /** @type {Record<string, (args: any) => any>} */
  const functions = { snapshot, act, scrollPage, frameRect, announceFrames, frameSlot, pageInfo };

  Object.defineProperty(g, '__suzentAgent', {
    value: Object.freeze({
      version: 1,
      /** @param {string} name @param {any} args */
      call(name, args) {
        const f = Object.prototype.hasOwnProperty.call(functions, name) ? functions[name] : null;
        if (!f) {
          return { error: 'unknown agent function ' + String(name), code: 'bad_args' };
        }
        try {
          return f(args && typeof args === 'object' ? args : {});
        } catch (e) {
          return { error: 'agent error in ' + name + ': ' + String(e && /** @type {any} */ (e).message || e), code: 'agent' };
        }
      },
    }),
    configurable: false,
    enumerable: false,
    writable: false,
  });
})();
