// The page `kanoko share` writes: plays a Kanoko run (docs/share.md) with three.js and Web Audio.
// The run is in two script blocks: #kanoko-meta (JSON: bodies, springs, statistics' names, sound
// options, where each array lies in the data) and #kanoko-data (base64 of one little-endian
// binary block). Nothing is fetched from the network.
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  function showMessage(text) {
    const m = $('message');
    m.textContent = m.hidden ? text : m.textContent + ' ' + text;
    m.hidden = false;
  }

  // ---- The run's data --------------------------------------------------------------------
  // A page written by `kanoko share` holds the frames (#kanoko-data); a page served by
  // `kanoko serve` reads them from the server (meta.stream), block by block.
  const meta = JSON.parse($('kanoko-meta').textContent);
  const N = meta.bodies.length;
  const S = meta.stats.length;
  const Q = 65535;
  let begin = meta.begin;
  let end = meta.end;
  let cueTimes = new Float64Array(0);
  let cueGains = new Float32Array(0);
  let cueBodies = new Uint32Array(0);
  let src = null;  // the frames: inlineSource() or streamSource()

  /** Index of the last entry of the sorted array `a` that is <= t (0 if none). */
  function lastAtOrBefore(a, t) {
    let lo = 0;
    let hi = a.length - 1;
    if (hi < 0 || t < a[0]) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (a[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  const clamp = (x, lo, hi) => Math.min(Math.max(x, lo), hi);

  /** The frames inlined in the page (docs/share.md: "What the page stores"). */
  function inlineSource() {
    const raw = atob($('kanoko-data').textContent.trim());
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; ++i) bytes[i] = raw.charCodeAt(i);
    const part = (name, Type) => new Type(bytes.buffer, meta.data[name][0], meta.data[name][1]);
    const times = part('times', Float64Array);
    const statTimes = part('stat_times', Float64Array);
    const stats = part('stats', Float32Array);
    const qPositions = part('positions', Uint16Array);
    const qSpeeds = part('speeds', Uint16Array);
    cueTimes = part('cue_times', Float64Array);
    cueGains = part('cue_gains', Float32Array);
    cueBodies = part('cue_bodies', Uint32Array);
    const springBytes = part('spring_bytes', Float32Array);
    const maxSpringBytes = part('max_spring_bytes', Float32Array);
    const partnerBodies = part('partner_bodies', Uint32Array);
    const partnerSent = part('partner_sent', Float32Array);
    const partnerReceived = part('partner_received', Float32Array);
    const E = meta.edges.length;
    const P = meta.top_partners;
    const F = times.length;
    // Positions dequantised once (F × N × 3), in the run's scene units.
    const positions = new Float64Array(qPositions.length);
    for (let j = 0; j < qPositions.length; ++j) {
      const c = j % 3;
      positions[j] = meta.box_lo[c] + (qPositions[j] / Q) * meta.box_extent[c];
    }
    /** Frame k and the weight of frame k + 1 at time t (linear between stored frames). */
    function bracket(t) {
      const k = lastAtOrBefore(times, t);
      if (k + 1 >= F) return [k, 0];
      return [k, clamp((t - times[k]) / (times[k + 1] - times[k]), 0, 1)];
    }
    return {
      frames: () => F,
      want() {},
      positionAt(i, t) {
        const [k, w] = bracket(t);
        const a = (k * N + i) * 3;
        const b = Math.min(k + 1, F - 1) * N * 3 + i * 3;
        return [0, 1, 2].map((c) => positions[a + c] * (1 - w) + positions[b + c] * w);
      },
      /** From the stored positions around t (scene units per trace second). */
      velocityAt(i, t) {
        if (F < 2) return [0, 0, 0];
        const k = Math.min(lastAtOrBefore(times, t), F - 2);
        const dt = times[k + 1] - times[k];
        const a = (k * N + i) * 3;
        const b = ((k + 1) * N + i) * 3;
        return [0, 1, 2].map((c) => (positions[b + c] - positions[a + c]) / dt);
      },
      /** Stored, linearly interpolated as the desktop panel does. */
      speedAt(i, t) {
        const [k, w] = bracket(t);
        const b = Math.min(k + 1, F - 1);
        return ((qSpeeds[k * N + i] * (1 - w) + qSpeeds[b * N + i] * w) / Q) * meta.max_speed;
      },
      /** The time of the last run frame at or before t: the frame statAt reads. */
      statTimeAt(t) {
        return statTimes[lastAtOrBefore(statTimes, t)];
      },
      /** That of the last run frame at or before t. */
      statAt(i, s, t) {
        return stats[(lastAtOrBefore(statTimes, t) * N + i) * S + s];
      },
      /** Spring e's bytes (both ways) in the interval at t, and the busiest spring's; null
       * without the run's traffic. */
      springTraffic(e, t) {
        if (!meta.traffic) return null;
        const k = lastAtOrBefore(statTimes, t);
        return [springBytes[k * E + e], maxSpringBytes[k]];
      },
      /** Body i's top partners so far at t (the desktop panel's), or null without traffic. */
      partnersAt(i, t) {
        if (!meta.traffic) return null;
        const at = (lastAtOrBefore(statTimes, t) * N + i) * P;
        const out = [];
        for (let j = 0; j < P && partnerBodies[at + j] !== 0xffffffff; ++j) {
          out.push({ body: partnerBodies[at + j], sent: partnerSent[at + j], received: partnerReceived[at + j] });
        }
        return out;
      },
      /** Nothing is awaited: the page holds everything. */
      settled: () => true,
    };
  }

  /** The run's frames read from `kanoko serve` with HTTP range requests, in the trajectory
   * layout (docs/trajectory-format.md, formats 2 and 3): the header says where block b's frames are. */
  function streamSource(url) {
    const s = { blocks: new Map(), count: 0, complete: false, last: [], error: null };
    function get(from, to) {
      return fetch(url, { headers: { Range: 'bytes=' + from + '-' + to }, cache: 'no-store' }).then((r) => {
        if (r.status !== 206 && r.status !== 200) {
          return r.text().then((text) => { throw new Error(text.trim() || 'HTTP ' + r.status); });
        }
        const total = Number((r.headers.get('Content-Range') || '/').split('/')[1]);
        return r.arrayBuffer().then((buffer) => ({ buffer, total }));
      });
    }
    s.fail = (e) => {
      if (s.error === null) showMessage('The run cannot be read from kanoko serve: ' + e.message);
      s.error = e;
      s.retryAt = Date.now() + 2000;
    };
    /** Reads the header and completion record: how many frames can be read now. */
    s.refresh = () => get(0, 143).then(({ buffer, total }) => {
      const v = new DataView(buffer);
      const text = (o, n) => String.fromCharCode(...new Uint8Array(buffer, o, n));
      // Formats 2 and 3 share the layout (3 changed the checksums, which the page does not check).
      const major = v.getUint16(8, true);
      if (text(0, 8) !== 'KANOKOTJ' || (major !== 2 && major !== 3)) throw new Error(url + ' is not a format 2 or 3 run');
      s.B = v.getUint32(24, true);
      s.offset = Number(v.getBigUint64(32, true));
      s.stride = Number(v.getBigUint64(40, true)) / 8;  // doubles per frame
      s.step = v.getFloat64(56, true) * v.getUint32(64, true);
      s.blockBytes = s.B * s.stride * 8 + 48;
      s.complete = text(96, 8) === 'KNTJDONE';
      s.count = s.complete ? Number(v.getBigUint64(104, true))
        : Math.max(0, Math.floor((total - s.offset) / s.blockBytes)) * s.B;
      if (s.count === 0) return null;
      return Promise.all([s.load(0), s.load(Math.floor((s.count - 1) / s.B))]);
    });
    /** Fetches block b's frames (once). */
    s.load = (b) => {
      if (s.blocks.has(b)) return Promise.resolve(s.blocks.get(b));
      // After a failure, no new request for 2 s (not one per animation frame).
      if (s.error !== null && Date.now() < s.retryAt) return Promise.resolve(null);
      const count = Math.min(s.B, s.count - b * s.B);
      const from = s.offset + b * s.blockBytes;
      const p = get(from, from + count * s.stride * 8 - 1).then(({ buffer }) => {
        const d = new Float64Array(buffer);
        s.blocks.set(b, d);
        return d;
      });
      s.blocks.set(b, p);
      p.catch((e) => {
        s.blocks.delete(b);
        s.fail(e);
      });
      return p;
    };
    /** [block data, offset of frame k in it], or null while its block is not here. */
    s.frame = (k) => {
      const d = s.blocks.get(Math.floor(k / s.B));
      return d instanceof Float64Array ? [d, (k % s.B) * s.stride] : null;
    };
    s.time = (k) => {
      const f = s.frame(k);
      return f ? f[0][f[1]] : s.frame(0)[0][0] + k * s.step;
    };
    /** The last frame at or before t: frames are a fixed number of steps apart, then corrected. */
    s.index = (t) => {
      let k = clamp(Math.floor((t - s.time(0)) / s.step + 1e-9), 0, s.count - 1);
      for (let n = 0; n < 8 && k > 0 && s.time(k) > t; ++n) --k;
      for (let n = 0; n < 8 && k + 1 < s.count && s.time(k + 1) <= t; ++n) ++k;
      return k;
    };
    s.want = (t) => {
      const k = s.index(t);
      for (const j of [k, k + 1, k + s.B]) if (j < s.count) s.load(Math.floor(j / s.B));
    };
    /** Values at column `col` of the frames around t, linearly interpolated (null: not here). */
    function around(t, col, width) {
      const k = s.index(t);
      const a = s.frame(k);
      if (!a) return null;
      const b = k + 1 < s.count ? s.frame(k + 1) : null;
      const w = b ? clamp((t - a[0][a[1]]) / (b[0][b[1]] - a[0][a[1]]), 0, 1) : 0;
      const out = [];
      for (let c = 0; c < width; ++c) out.push(a[0][a[1] + col + c] * (1 - w) + (b ? b[0][b[1] + col + c] * w : 0));
      return out;
    }
    s.positionAt = (i, t) => {
      const p = around(t, 1 + 3 * i, 3);
      if (p) s.last[i] = p;
      return s.last[i] || [meta.box_lo[0], meta.box_lo[1], meta.box_lo[2]];
    };
    s.velocityAt = (i, t) => around(t, 1 + 3 * N + 3 * i, 3) || [0, 0, 0];
    s.speedAt = (i, t) => Math.hypot(...s.velocityAt(i, t));
    s.statTimeAt = (t) => s.time(s.index(t));
    s.statAt = (i, st, t) => {
      const f = s.frame(s.index(t));
      return f ? f[0][f[1] + 1 + 6 * N + i * S + st] : NaN;
    };
    s.frames = () => s.count;

    /** What the server computes per binning interval (/traffic.json, /partners.json): read again
     * when the time leaves the interval of the last answer, which is used meanwhile. */
    const waiting = new Set();
    function perInterval(path) {
      let last = null;
      let retryAt = 0;  // after a failure, no new request for 2 s
      const inside = (t) => last !== null && (last.from === null || t >= last.from) && t < last.to;
      const answerAt = (t) => {
        if (!meta.traffic) return null;
        if (!inside(t) && !waiting.has(answerAt) && Date.now() >= retryAt) {
          waiting.add(answerAt);
          fetch(path + (path.indexOf('?') >= 0 ? '&' : '?') + 't=' + t, { cache: 'no-store' }).then((r) => {
            if (!r.ok) return r.text().then((text) => { throw new Error(text.trim() || path + ': HTTP ' + r.status); });
            return r.json();
          }).then((answer) => { last = answer; }, (e) => {
            retryAt = Date.now() + 2000;
            s.fail(e);
          }).finally(() => waiting.delete(answerAt));
        }
        return last;
      };
      return answerAt;
    }
    const trafficAt = perInterval(meta.traffic_url);
    const partnersOf = new Map();
    s.springTraffic = (e, t) => {
      const answer = trafficAt(t);
      return answer === null ? null : [answer.spring_bytes[e], answer.max];
    };
    s.partnersAt = (i, t) => {
      if (!partnersOf.has(i)) partnersOf.set(i, perInterval(meta.partners_url + '?body=' + i));
      const answer = partnersOf.get(i)(t);
      return answer === null ? null : answer.partners;
    };
    /** No answer is awaited from the server. */
    s.settled = () => waiting.size === 0;
    return s;
  }

  const positionAt = (i, t) => src.positionAt(i, t);
  const velocityAt = (i, t) => src.velocityAt(i, t);
  const speedAt = (i, t) => src.speedAt(i, t);
  const statAt = (i, s, t) => src.statAt(i, s, t);

  // Spheres grow with the cube root of the body's mass relative to the run's first frame
  // (mass0), as the desktop viewer draws them (trajectory::mass_ratio_scale, its clamp in
  // meta.mass_ratio_range).
  const massStat = meta.stats.findIndex((st) => st.name === 'mass');
  function radiusScale(i, t) {
    if (massStat < 0) return 1;
    const m = statAt(i, massStat, t);
    const m0 = meta.bodies[i].mass0;
    if (!(m0 > 0) || !isFinite(m0) || !isFinite(m) || !(m > 0)) return 1;
    return Math.cbrt(clamp(m / m0, meta.mass_ratio_range[0], meta.mass_ratio_range[1]));
  }

  /** The sound cues of the frames served so far (kanoko serve detects them as `kanoko share`
   * does), read again when the run has grown. */
  let cuesFor = null;
  function loadCues(s) {
    const key = s.count + (s.complete ? ' complete' : '');
    if (!meta.cues_url || key === cuesFor) return;
    cuesFor = key;
    fetch(meta.cues_url, { cache: 'no-store' }).then((r) => {
      if (!r.ok) throw new Error(meta.cues_url + ': HTTP ' + r.status);
      return r.json();
    }).then((c) => {
      cueTimes = Float64Array.from(c.times);
      cueGains = Float32Array.from(c.gains);
      cueBodies = Uint32Array.from(c.bodies);
    }).catch((e) => {
      cuesFor = null;
      s.fail(e);
    });
  }

  if (meta.stream) {
    const s = streamSource(meta.stream);
    const first = () => s.refresh().then(() => {
      if (s.count === 0) {
        showMessage('Waiting for the first block of frames of the run being simulated…');
        setTimeout(first, 1000);
        return;
      }
      $('message').hidden = true;
      src = s;
      begin = s.time(0);
      end = s.time(s.count - 1);
      main();
      loadCues(s);
      const follow = () => s.refresh().then(() => {
        end = s.time(s.count - 1);
        loadCues(s);
        if (!s.complete) setTimeout(follow, 1000);
      }, (e) => s.fail(e));
      if (!s.complete) setTimeout(follow, 1000);
    }).catch((e) => s.fail(e));
    first();
  } else {
    src = inlineSource();
    main();
  }

  function main() {
    // ---- Text as the desktop inspect panel writes it -----------------------------------------
    /** printf("%.<p>g", v): rounded as C rounds the exact binary value (a tie, which only an
     * exactly representable half can be, goes to the even digit; toPrecision would round it up). */
    function fmtG(v, p) {
      if (!isFinite(v)) return String(v);
      if (v === 0) return '0';
      // The exact decimal expansion (a double's tie has at most 100 significant digits).
      const [m, x] = Math.abs(v).toExponential(99).split('e');
      const all = m.replace('.', '');
      let e = Number(x);
      let digits = all.slice(0, p).split('').map(Number);
      const next = Number(all[p]);
      const rest = /[1-9]/.test(all.slice(p + 1));
      if (next > 5 || (next === 5 && (rest || digits[p - 1] % 2 === 1))) {
        let k = p - 1;
        while (k >= 0 && digits[k] === 9) digits[k--] = 0;
        if (k < 0) {
          digits = [1].concat(digits.slice(0, p - 1));
          e += 1;
        } else {
          digits[k] += 1;
        }
      }
      const sign = v < 0 ? '-' : '';
      const strip = (s) => (s.indexOf('.') >= 0 ? s.replace(/\.?0+$/, '') : s);
      if (e < -4 || e >= p) {
        const mantissa = strip(digits[0] + '.' + digits.slice(1).join(''));
        return sign + mantissa + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
      }
      const d = digits.join('');
      if (e === p - 1) return sign + d;
      const fixed = e >= 0 ? d.slice(0, e + 1) + '.' + d.slice(e + 1) : '0.' + '0'.repeat(-e - 1) + d;
      return sign + strip(fixed);
    }
    /** As trajectory::format_stat_value: fractions of the interval as percentages. */
    function formatStat(name, v, percent = false) {
      if (percent) return (100 * v).toFixed(1) + ' %';
      if (name.startsWith('bytes') && Math.abs(v) >= 1024) {
        const units = ['KiB', 'MiB', 'GiB', 'TiB'];
        let x = v / 1024;
        let u = 0;
        while (Math.abs(x) >= 1024 && u + 1 < units.length) {
          x /= 1024;
          ++u;
        }
        return fmtG(x, 4) + ' ' + units[u];
      }
      if (name.startsWith('bytes')) return fmtG(v, 6) + ' B';
      return fmtG(v, 6);
    }
    /** Bytes as the desktop panel writes a partner's traffic. */
    function formatBytes(v) {
      return formatStat('bytes', v);
    }
    function line(label, value) {
      return label.padEnd(Math.max(label.length + 1, 22), ' ') + value + '\n';
    }
    function bodyTitle(i) {
      const b = meta.bodies[i];
      return (b.name === '' ? 'body ' + i : b.name) + (b.rank >= 0 ? '  (rank ' + b.rank + ')' : '');
    }
    /** As the desktop panel's interval line: the run's binning interval holding frame time ft
     * (Metadata::interval_of), or the settling phase after the trace. */
    function intervalText(ft) {
      if (ft > meta.trace_end) return 'settling (after the trace)';
      if (!(meta.interval > 0)) return 'none';
      const k = ft > meta.trace_begin ? Math.floor((ft - meta.trace_begin) / meta.interval) : 0;
      const t0 = meta.trace_begin + k * meta.interval;
      const t1 = Math.min(meta.trace_end, t0 + meta.interval);
      return '[' + fmtG(t0, 6) + ', ' + fmtG(Math.max(t0, t1), 6) + ') s';
    }
    /** The interval's share in no state (trace::split_time over the stored busy, communicating
     * and idle fractions), or null without them or after the trace. */
    function noStateShare(i, t, ft) {
      const at = ['busy', 'communicating', 'idle'].map((n) => meta.stats.findIndex((st) => st.name === n));
      if (at.some((k) => k < 0) || ft > meta.trace_end) return null;
      return Math.max(0, 1 - at.reduce((sum, k) => sum + statAt(i, k, t), 0));
    }
    function describeBody(i, t) {
      const b = meta.bodies[i];
      let text = bodyTitle(i) + '\n';
      if (b.host !== '') text += line('host', b.host);
      const ft = src.statTimeAt(t);
      text += line('interval', intervalText(ft));
      meta.stats.forEach((st, s) => {
        text += line(st.label, formatStat(st.name, statAt(i, s, t), st.percent));
      });
      const noState = noStateShare(i, t, ft);
      if (noState !== null) text += line('no state (interval)', formatStat('', noState, true));
      text += line('speed', fmtG(speedAt(i, t), 4) + ' units/s');
      const neighbours = [];
      for (const [a, c] of meta.edges) {
        if (a === i) neighbours.push(meta.bodies[c].name);
        if (c === i) neighbours.push(meta.bodies[a].name);
      }
      let list = neighbours.slice(0, 4).join(', ');
      if (neighbours.length > 4) list += ' +' + (neighbours.length - 4) + ' more';
      text += line('springs to', neighbours.length === 0 ? 'none' : list);
      const partners = src.partnersAt(i, t);
      if (partners !== null) {
        if (partners.length === 0) text += line('top partners', 'none so far');
        partners.forEach((p, k) => {
          const who = meta.bodies[p.body].name === '' ? 'body ' + p.body : meta.bodies[p.body].name;
          text += line(k === 0 ? 'top partners' : '', who + ': ' + formatBytes(p.sent + p.received) +
            ' (sent ' + formatBytes(p.sent) + ', recv ' + formatBytes(p.received) + ')');
        });
      }
      return text;
    }
    function dialText(t) {
      const duration = end - begin;
      let decimals = 2;
      if (duration > 0) decimals = Math.min(Math.max(3 - Math.floor(Math.log10(duration)), 0), 9);
      return 't = ' + t.toFixed(decimals) + ' s  (' + (100 * dialFraction(t)).toFixed(0) + '%)';
    }
    function dialFraction(t) {
      const duration = end - begin;
      if (!(duration > 0) || !isFinite(t)) return 0;
      return Math.min(Math.max((t - begin) / duration, 0), 1);
    }

    // ---- Clock --------------------------------------------------------------------------------
    const baseSpeed = end > begin ? (end - begin) / meta.playback_wall_s : 1;
    const clock = { t: begin, playing: false, factor: 1, wall: null };

    // ---- Legend -------------------------------------------------------------------------------
    $('legend-title').textContent = meta.title || 'Kanoko run';
    /** The legend's counts (a served run grows: its end and cues change). */
    function legendSummary() {
      return N + ' bodies, ' + meta.edges.length + ' springs, t = ' + fmtG(begin, 6) + ' to ' + fmtG(end, 6) +
        ' s, ' + cueTimes.length + ' sound cues';
    }
    $('legend-summary').textContent = legendSummary();
    const legendLimit = 64;
    const legendList = $('legend-bodies');
    meta.bodies.slice(0, legendLimit).forEach((b, i) => {
      const li = document.createElement('li');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = 'rgb(' + b.colour.map((c) => Math.round(c * 255)).join(',') + ')';
      li.appendChild(sw);
      li.appendChild(document.createTextNode(bodyTitle(i)));
      const v = document.createElement('span');
      v.className = 'voice';
      v.textContent = b.voice;
      li.appendChild(v);
      legendList.appendChild(li);
    });
    if (N > legendLimit) {
      const li = document.createElement('li');
      li.textContent = '… and ' + (N - legendLimit) + ' more';
      legendList.appendChild(li);
    }

    // ---- Scene --------------------------------------------------------------------------------
    const canvas = $('scene');
    let renderer = null;
    if (typeof THREE === 'undefined') {
      showMessage('three.js did not load: the 3-D scene cannot be shown.');
    } else {
      const probe = document.createElement('canvas');
      const gl = probe.getContext('webgl') || probe.getContext('experimental-webgl');
      if (!gl) {
        showMessage('This browser cannot show the 3-D scene: WebGL is not available (turn on hardware ' +
          'acceleration or WebGL in its settings). The clock and the legend still work.');
      } else {
        renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: true, preserveDrawingBuffer: true });
      }
    }

    const centre = [0, 1, 2].map((c) => meta.box_lo[c] + 0.5 * meta.box_extent[c]);
    const maxRadius = meta.bodies.reduce((r, b) => Math.max(r, b.radius), 0.1);
    const size = Math.max(Math.hypot(...meta.box_extent), 4 * maxRadius);
    let scene = null;
    let camera = null;
    let controls = null;
    const spheres = [];
    let springLines = null;
    if (renderer) {
      renderer.setPixelRatio(window.devicePixelRatio || 1);
      scene = new THREE.Scene();
      scene.background = new THREE.Color(0x101418);
      camera = new THREE.PerspectiveCamera(45, 1, size * 1e-3, size * 100);
      // As the desktop's home view: the run's bounding sphere (radius size / 2) fills the view.
      const away = new THREE.Vector3(0.35, 0.45, 1.9).normalize().multiplyScalar(1.06 * 0.5 * size / Math.sin(Math.PI / 8));
      camera.position.set(centre[0] + away.x, centre[1] + away.y, centre[2] + away.z);
      camera.up.set(0, 1, 0);
      scene.add(camera);
      scene.add(new THREE.AmbientLight(0xffffff, 0.45));
      const headlight = new THREE.DirectionalLight(0xffffff, 0.55);
      headlight.position.set(0, 0, 1);
      camera.add(headlight);
      const ball = new THREE.SphereGeometry(1, 32, 20);
      meta.bodies.forEach((b, i) => {
        const colour = new THREE.Color(b.colour[0], b.colour[1], b.colour[2]);
        const mesh = new THREE.Mesh(ball, new THREE.MeshLambertMaterial({ color: colour }));
        mesh.scale.setScalar(b.radius);
        mesh.userData.body = i;
        scene.add(mesh);
        spheres.push(mesh);
      });
      const springGeometry = new THREE.BufferGeometry();
      springGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(meta.edges.length * 6), 3));
      springGeometry.setAttribute('color', new THREE.BufferAttribute(new Float32Array(meta.edges.length * 6), 3));
      springLines = new THREE.LineSegments(springGeometry, new THREE.LineBasicMaterial({ vertexColors: true }));
      springLines.frustumCulled = false;
      scene.add(springLines);
      controls = new THREE.OrbitControls(camera, canvas);
      controls.target.set(centre[0], centre[1], centre[2]);
      controls.update();
    }

    // Name labels (runs of at most max_labels bodies).
    const labels = [];
    if (renderer && N <= meta.max_labels) {
      meta.bodies.forEach((b, i) => {
        const div = document.createElement('div');
        div.textContent = b.name === '' ? 'body ' + i : b.name;
        $('labels').appendChild(div);
        labels.push(div);
      });
    }

    function resize() {
      const w = canvas.clientWidth;
      const h = canvas.clientHeight;
      if (renderer && (canvas.width !== Math.floor(w * renderer.getPixelRatio()) ||
                       canvas.height !== Math.floor(h * renderer.getPixelRatio()))) {
        renderer.setSize(w, h, false);
        camera.aspect = w / Math.max(h, 1);
        camera.updateProjectionMatrix();
      }
      const dial = $('dial');
      const ratio = window.devicePixelRatio || 1;
      if (dial.width !== Math.floor(w * ratio) || dial.height !== Math.floor(h * ratio)) {
        dial.width = Math.floor(w * ratio);
        dial.height = Math.floor(h * ratio);
      }
    }

    /** The paper's clock: a circle whose hand sweeps once per run, and the time above it. */
    function drawDial(t) {
      const dial = $('dial');
      const ratio = window.devicePixelRatio || 1;
      const g = dial.getContext('2d');
      g.setTransform(ratio, 0, 0, ratio, 0, 0);
      const w = dial.width / ratio;
      const h = dial.height / ratio;
      g.clearRect(0, 0, w, h);
      const r = Math.min(Math.max(0.09 * Math.min(w, h), 22), 64);
      const labelSize = Math.min(Math.max(0.3 * r + 5, 11), 18);
      const margin = 0.5 * r + 4;
      const cx = w - margin - r;
      const labelX = w - margin * 0.5;
      const labelY = margin * 0.5 + 0.25 * labelSize;
      const cy = labelY + 1.45 * labelSize + r;
      g.fillStyle = 'rgba(16, 20, 24, 0.6)';
      g.strokeStyle = '#d8dde2';
      g.lineWidth = 2;
      g.beginPath();
      g.arc(cx, cy, r, 0, 2 * Math.PI);
      g.fill();
      g.stroke();
      g.beginPath();
      g.moveTo(cx, cy - r);
      g.lineTo(cx, cy - r + 0.15 * r);
      g.stroke();
      const a = 2 * Math.PI * dialFraction(t);
      g.strokeStyle = '#ffcc44';
      g.lineWidth = 3;
      g.beginPath();
      g.moveTo(cx, cy);
      g.lineTo(cx + 0.85 * r * Math.sin(a), cy - 0.85 * r * Math.cos(a));
      g.stroke();
      g.fillStyle = '#e4e8ec';
      g.font = labelSize + 'px system-ui, sans-serif';
      g.textAlign = 'right';
      g.textBaseline = 'middle';
      g.fillText(dialText(t), labelX, labelY + 0.5 * labelSize);
    }

    /** Screen position (CSS pixels in the window) of world point p, and whether it is in front. */
    function toScreen(p) {
      const v = new THREE.Vector3(p[0], p[1], p[2]).project(camera);
      const rect = canvas.getBoundingClientRect();
      return { x: rect.left + (v.x + 1) * 0.5 * rect.width, y: rect.top + (1 - v.y) * 0.5 * rect.height,
               depth: v.z, visible: v.z > -1 && v.z < 1 };
    }

    // ---- Spring colours: the desktop's scales (src/trajectory/spring_colour.hpp) as tables ------
    const springTables = meta.spring_colours;
    let springMode = 'tension';
    if (!meta.traffic) $('springs').querySelector('option[value="traffic"]').disabled = true;
    /** The table's colour at x, linear between its samples, clamped at its ends; the neutral
     * grey for an x that is not a number. */
    function lookup(table, x) {
      if (!isFinite(x)) return springTables.neutral;
      const k = clamp(lastAtOrBefore(table.x, x), 0, table.x.length - 2);
      const w = clamp((x - table.x[k]) / (table.x[k + 1] - table.x[k]), 0, 1);
      return [0, 1, 2].map((c) => table.rgb[k][c] * (1 - w) + table.rgb[k + 1][c] * w);
    }
    /** Spring e's colour at t in the current mode. */
    function springColour(e, t) {
      const [a, b] = meta.edges[e];
      if (springMode === 'tension') {
        const pa = positionAt(a, t);
        const pb = positionAt(b, t);
        const length0 = meta.spring_length0[e];
        const length = Math.hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]);
        return lookup(springTables.tension, length0 > 0 ? length / length0 : NaN);
      }
      const traffic = springMode === 'traffic' ? src.springTraffic(e, t) : null;
      if (traffic === null) return springTables.neutral;
      return lookup(springTables.traffic, traffic[1] > 0 ? traffic[0] / traffic[1] : 0);
    }
    /** The legend of the spring colours: the current scale as a gradient with its ends. */
    function springLegend() {
      const legend = $('spring-legend');
      legend.hidden = springMode === 'off' || meta.edges.length === 0;
      if (legend.hidden) return;
      const table = springTables[springMode];
      const css = (c) => 'rgb(' + c.map((v) => Math.round(v * 255)).join(',') + ')';
      const stops = table.rgb.map((c, k) => css(c) + ' ' + ((100 * k) / (table.rgb.length - 1)).toFixed(1) + '%');
      $('spring-scale').style.background = 'linear-gradient(to right, ' + stops.join(', ') + ')';
      const lo = table.x[0];
      const hi = table.x[table.x.length - 1];
      const pct = (x) => (x > 1 ? '+' : '') + Math.round(100 * (x - 1)) + '%';
      $('spring-legend-title').textContent = springMode === 'tension'
        ? 'Springs: length against the start' : 'Springs: bytes in the interval';
      $('spring-lo').textContent = springMode === 'tension' ? 'compressed ' + pct(lo) : 'none';
      $('spring-hi').textContent = springMode === 'tension' ? 'stretched ' + pct(hi) : 'busiest spring';
    }
    $('springs').addEventListener('change', (e) => {
      springMode = e.target.value;
      springLegend();
      update(clock.t);
    });
    springLegend();

    let selected = -1;
    function update(t) {
      src.want(t);
      resize();
      if (renderer) {
        for (let i = 0; i < N; ++i) {
          const p = positionAt(i, t);
          spheres[i].position.set(p[0], p[1], p[2]);
          spheres[i].scale.setScalar(meta.bodies[i].radius * radiusScale(i, t));
        }
        const attr = springLines.geometry.getAttribute('position');
        meta.edges.forEach(([a, b], e) => {
          attr.setXYZ(2 * e, spheres[a].position.x, spheres[a].position.y, spheres[a].position.z);
          attr.setXYZ(2 * e + 1, spheres[b].position.x, spheres[b].position.y, spheres[b].position.z);
        });
        attr.needsUpdate = true;
        const colours = springLines.geometry.getAttribute('color');
        meta.edges.forEach((edge, e) => {
          const c = springColour(e, t);
          colours.setXYZ(2 * e, c[0], c[1], c[2]);
          colours.setXYZ(2 * e + 1, c[0], c[1], c[2]);
        });
        colours.needsUpdate = true;
        renderer.render(scene, camera);
        labels.forEach((div, i) => {
          const s = toScreen(positionAt(i, t));
          const rect = canvas.getBoundingClientRect();
          div.style.display = s.visible ? '' : 'none';
          div.style.left = (s.x - rect.left) + 'px';
          div.style.top = (s.y - rect.top) + 'px';
        });
      }
      drawDial(t);
      $('clock-text').textContent = dialText(t);
      if (meta.stream) {
        const summary = legendSummary();
        if ($('legend-summary').textContent !== summary) $('legend-summary').textContent = summary;
      }
      const scrub = $('scrub');
      if (document.activeElement !== scrub || !scrubbing) scrub.value = String(dialFraction(t));
      if (selected >= 0) $('panel-text').textContent = describeBody(selected, t);
      sound.follow(t);
    }

    // ---- Sound (Web Audio) --------------------------------------------------------------------
    const AudioContextClass = window.AudioContext || window.webkitAudioContext;
    const sound = {
      ctx: null,
      master: null,
      panners: [],
      hrtf: meta.audio.hrtf,
      doppler: meta.audio.doppler,

      /** One panner per body into a master gain, on any audio context (live or offline). */
      chain(ctx, hrtf) {
        const master = ctx.createGain();
        master.gain.value = meta.audio.master_volume;
        master.connect(ctx.destination);
        const panners = meta.bodies.map(() => {
          const p = ctx.createPanner();
          p.panningModel = hrtf ? 'HRTF' : 'equalpower';
          p.distanceModel = 'inverse';
          p.refDistance = meta.audio.reference_distance;
          p.rolloffFactor = 1;
          p.connect(master);
          return p;
        });
        return { master, panners };
      },

      /** Puts the listener at the camera, looking where it looks, and body i's panner at time t. */
      place(ctx, panners, t) {
        const l = ctx.listener;
        const pos = camera ? camera.position : new THREE.Vector3(centre[0], centre[1], centre[2] + 2 * size);
        const fwd = new THREE.Vector3(0, 0, -1);
        const up = new THREE.Vector3(0, 1, 0);
        if (camera) {
          camera.getWorldDirection(fwd);
          up.copy(camera.up).applyQuaternion(camera.quaternion);
        }
        setParam(l, 'positionX', 'positionY', 'positionZ', 'setPosition', [pos.x, pos.y, pos.z]);
        if (l.forwardX) {
          [['forwardX', fwd.x], ['forwardY', fwd.y], ['forwardZ', fwd.z], ['upX', up.x], ['upY', up.y], ['upZ', up.z]]
            .forEach(([k, v]) => { l[k].value = v; });
        } else {
          l.setOrientation(fwd.x, fwd.y, fwd.z, up.x, up.y, up.z);
        }
        panners.forEach((p, i) => setParam(p, 'positionX', 'positionY', 'positionZ', 'setPosition', positionAt(i, t)));
        return pos;
      },

      /** Pitch factor of body i at t: the radial velocity away from the listener lowers it. */
      pitchFactor(i, t, listener) {
        if (!this.doppler) return 1;
        const p = positionAt(i, t);
        const v = velocityAt(i, t);
        const d = [p[0] - listener.x, p[1] - listener.y, p[2] - listener.z];
        const r = Math.hypot(d[0], d[1], d[2]);
        if (!(r > 0)) return 1;
        const radial = (v[0] * d[0] + v[1] * d[1] + v[2] * d[2]) / r;
        const c = meta.audio.speed_of_sound;
        return Math.min(Math.max(c / (c + radial), 0.5), 2);
      },

      /** Plays body i's voice at context time `when` into `panner`. */
      voice(ctx, panner, i, when, gain, factor) {
        const b = meta.bodies[i];
        const length = meta.audio.cue_length_s;
        const env = ctx.createGain();
        env.gain.setValueAtTime(0, when);
        env.gain.linearRampToValueAtTime(gain, when + 0.005);
        const decay = b.timbre === 'bell' ? length : b.timbre === 'pluck' ? 0.35 * length : 0.8 * length;
        env.gain.setTargetAtTime(0, when + 0.005, decay / 3);
        env.gain.setValueAtTime(0, when + length);
        env.connect(panner);
        const partials = b.timbre === 'bell' ? [[1, 1], [2.76, 0.4], [5.4, 0.2]] : [[1, 1]];
        for (const [ratio, level] of partials) {
          const osc = ctx.createOscillator();
          osc.type = b.timbre === 'pluck' ? 'sawtooth' : b.timbre === 'bell' ? 'sine' : b.timbre;
          osc.frequency.value = b.pitch * ratio * factor;
          const g = ctx.createGain();
          g.gain.value = level;
          osc.connect(g);
          g.connect(env);
          osc.start(when);
          osc.stop(when + length + 0.05);
        }
      },

      start() {
        if (!AudioContextClass) return;
        if (!this.ctx) {
          this.ctx = new AudioContextClass();
          const c = this.chain(this.ctx, this.hrtf);
          this.master = c.master;
          this.panners = c.panners;
        }
        this.ctx.resume();
      },
      stop() {
        if (this.ctx) this.ctx.suspend();
      },
      on() {
        return this.ctx !== null && this.ctx.state === 'running';
      },
      setHrtf(on) {
        this.hrtf = on;
        this.panners.forEach((p) => { p.panningModel = on ? 'HRTF' : 'equalpower'; });
      },

      lastT: null,
      played: 0,  // cues played so far
      /** Follows the clock: places the panners and plays the cues crossed since the last call. */
      follow(t) {
        const from = this.lastT;
        this.lastT = t;
        if (!this.on()) return;
        const listener = this.place(this.ctx, this.panners, t);
        if (from === null || !(t > from) || !clock.playing) return;
        let k = lastAtOrBefore(cueTimes, from);
        if (cueTimes.length === 0) return;
        if (cueTimes[k] <= from) ++k;
        let voices = 0;
        for (; k < cueTimes.length && cueTimes[k] <= t && voices < meta.audio.max_voices; ++k, ++voices) {
          const i = cueBodies[k];
          this.voice(this.ctx, this.panners[i], i, this.ctx.currentTime, cueGains[k], this.pitchFactor(i, t, listener));
          ++this.played;
        }
      },

      /** Renders one cue of body i at the current time offline, with HRTF or equal-power panning
       * (default: as the page is set); resolves to each channel's RMS. */
      renderOffline(i, seconds, hrtf) {
        const Offline = window.OfflineAudioContext || window.webkitOfflineAudioContext;
        const rate = 44100;
        const ctx = new Offline(2, Math.ceil(seconds * rate), rate);
        const c = this.chain(ctx, hrtf === undefined ? this.hrtf : hrtf);
        const listener = this.place(ctx, c.panners, clock.t);
        this.voice(ctx, c.panners[i], i, 0, 1, this.pitchFactor(i, clock.t, listener));
        return ctx.startRendering().then((buffer) => {
          const rms = (data) => Math.sqrt(data.reduce((s, x) => s + x * x, 0) / data.length);
          return { left: rms(buffer.getChannelData(0)), right: rms(buffer.getChannelData(1)) };
        });
      },
    };
    function setParam(node, x, y, z, legacy, v) {
      if (node[x]) {
        node[x].value = v[0];
        node[y].value = v[1];
        node[z].value = v[2];
      } else {
        node[legacy](v[0], v[1], v[2]);
      }
    }

    $('hrtf').checked = meta.audio.hrtf;
    $('doppler').checked = meta.audio.doppler;
    $('hrtf').addEventListener('change', (e) => sound.setHrtf(e.target.checked));
    $('doppler').addEventListener('change', (e) => { sound.doppler = e.target.checked; });
    if (!AudioContextClass) {
      showMessage('This browser has no Web Audio: the run plays without sound.');
      ['sound', 'hrtf', 'doppler'].forEach((id) => { $(id).disabled = true; });
    }
    $('sound').addEventListener('click', () => {
      if (sound.on()) {
        sound.stop();
        $('sound').textContent = 'Sound on';
      } else {
        sound.start();
        $('sound').textContent = 'Sound off';
      }
    });

    // ---- Controls -------------------------------------------------------------------------------
    function seek(t) {
      clock.t = Math.min(Math.max(t, begin), end);
      sound.lastT = clock.t;
      update(clock.t);
    }
    function setPlaying(on) {
      if (on && clock.t >= end) clock.t = begin;
      clock.playing = on;
      clock.wall = null;
      $('play').textContent = on ? 'Pause' : 'Play';
    }
    $('play').addEventListener('click', () => setPlaying(!clock.playing));
    $('speed').addEventListener('change', (e) => { clock.factor = Number(e.target.value); });
    let scrubbing = false;
    const scrub = $('scrub');
    scrub.addEventListener('input', () => {
      scrubbing = true;
      seek(begin + Number(scrub.value) * (end - begin));
    });
    scrub.addEventListener('change', () => { scrubbing = false; });

    // Fly navigation: W A S D move, Q E down and up, dragging turns the camera.
    const fly = { on: false, keys: new Set(), drag: null };
    function setFly(on) {
      if (!renderer) return;
      fly.on = on;
      controls.enabled = !on;
      $('nav').textContent = on ? 'Orbit' : 'Fly';
      if (!on) {
        const fwd = new THREE.Vector3();
        camera.getWorldDirection(fwd);
        const distance = camera.position.distanceTo(new THREE.Vector3(centre[0], centre[1], centre[2]));
        controls.target.copy(camera.position).addScaledVector(fwd, Math.max(distance, 0.1 * size));
        controls.update();
      }
    }
    $('nav').addEventListener('click', () => setFly(!fly.on));
    window.addEventListener('keydown', (e) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      if (e.key === ' ') {
        setPlaying(!clock.playing);
        e.preventDefault();
      } else if (e.key === 'f' || e.key === 'F') {
        setFly(!fly.on);
      } else {
        fly.keys.add(e.key.toLowerCase());
      }
    });
    window.addEventListener('keyup', (e) => fly.keys.delete(e.key.toLowerCase()));
    canvas.addEventListener('pointerdown', (e) => {
      fly.drag = { x: e.clientX, y: e.clientY, startX: e.clientX, startY: e.clientY };
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!fly.on || !fly.drag || !renderer) return;
      const dx = e.clientX - fly.drag.x;
      const dy = e.clientY - fly.drag.y;
      fly.drag.x = e.clientX;
      fly.drag.y = e.clientY;
      const euler = new THREE.Euler(0, 0, 0, 'YXZ').setFromQuaternion(camera.quaternion);
      euler.y -= dx * 0.005;
      euler.x = Math.min(Math.max(euler.x - dy * 0.005, -1.5), 1.5);
      camera.quaternion.setFromEuler(euler);
    });
    canvas.addEventListener('pointerup', (e) => {
      const d = fly.drag;
      fly.drag = null;
      if (!d || Math.hypot(e.clientX - d.startX, e.clientY - d.startY) > 4) return;
      pick(e.clientX, e.clientY);
    });
    function flyStep(wallDt) {
      if (!fly.on || fly.keys.size === 0) return;
      const step = 0.6 * size * wallDt;
      const fwd = new THREE.Vector3();
      camera.getWorldDirection(fwd);
      const right = new THREE.Vector3().crossVectors(fwd, camera.up).normalize();
      const k = fly.keys;
      if (k.has('w') || k.has('arrowup')) camera.position.addScaledVector(fwd, step);
      if (k.has('s') || k.has('arrowdown')) camera.position.addScaledVector(fwd, -step);
      if (k.has('d') || k.has('arrowright')) camera.position.addScaledVector(right, step);
      if (k.has('a') || k.has('arrowleft')) camera.position.addScaledVector(right, -step);
      if (k.has('e')) camera.position.addScaledVector(camera.up, step);
      if (k.has('q')) camera.position.addScaledVector(camera.up, -step);
    }

    // Click to inspect: the nearest body under the pointer.
    const raycaster = renderer ? new THREE.Raycaster() : null;
    function pick(x, y) {
      if (!renderer) return;
      const rect = canvas.getBoundingClientRect();
      const ndc = new THREE.Vector2(((x - rect.left) / rect.width) * 2 - 1, -((y - rect.top) / rect.height) * 2 + 1);
      raycaster.setFromCamera(ndc, camera);
      const hits = raycaster.intersectObjects(spheres);
      if (hits.length === 0) return;
      select(hits[0].object.userData.body);
    }
    function select(i) {
      selected = i;
      $('panel').hidden = i < 0;
      if (i >= 0) $('panel-text').textContent = describeBody(i, clock.t);
    }
    $('panel-close').addEventListener('click', () => select(-1));

    function frame(now) {
      const wallDt = clock.wall === null ? 0 : Math.min((now - clock.wall) / 1000, 0.25);
      clock.wall = now;
      if (clock.playing) {
        clock.t = Math.min(clock.t + wallDt * baseSpeed * clock.factor, end);
        if (clock.t >= end) setPlaying(false);
      }
      flyStep(wallDt);
      if (controls && controls.enabled) controls.update();
      update(clock.t);
      requestAnimationFrame(frame);
    }

    // ---- Hooks for tests and scripts ----------------------------------------------------------
    window.kanoko = {
      get begin() { return begin; }, get end() { return end; }, get frames() { return src.frames(); },
      get cues() { return cueTimes.length; },
      bodies: N, webgl: renderer !== null,
      seek(t) { seek(t); return clock.t; },
      time() { return clock.t; },
      playing() { return clock.playing; },
      /** Sound cues played so far, and whether the sound is on. */
      sound() { return { played: sound.played, on: sound.on() }; },
      cueTimes() { return Array.from(cueTimes); },
      /** The camera's position and the navigation mode. */
      camera() { return renderer ? { position: camera.position.toArray(), fly: fly.on } : null; },
      /** Puts the camera at `position` looking at `target` (world coordinates). */
      setCamera(position, target) {
        if (!renderer) return;
        camera.position.set(position[0], position[1], position[2]);
        controls.target.set(target[0], target[1], target[2]);
        camera.lookAt(controls.target);
        controls.update();
        update(clock.t);
      },
      /** Body i's centre on the screen (CSS pixels in the window) at the current time. */
      project(i) { return toScreen(positionAt(i, clock.t)); },
      position(i, t) { return positionAt(i, t === undefined ? clock.t : t); },
      colour(i) { return meta.bodies[i].colour.map((c) => Math.round(c * 255)); },
      selected() { return selected; },
      describe(i) { return describeBody(i, clock.t); },
      springCount: meta.edges.length,
      /** Whether the page awaits nothing from kanoko serve (always for a shared page). */
      settled() { return src.settled(); },
      /** The spring colouring ('tension', 'traffic' or 'off'), set when given. */
      springs(mode) {
        if (mode !== undefined) {
          $('springs').value = mode;
          $('springs').dispatchEvent(new Event('change'));
        }
        return springMode;
      },
      /** Spring e's colour now (0-255), its ends and its middle on the screen. */
      spring(e) {
        const [a, b] = meta.edges[e];
        const pa = positionAt(a, clock.t);
        const pb = positionAt(b, clock.t);
        return { colour: springColour(e, clock.t).map((c) => Math.round(c * 255)), a: toScreen(pa), b: toScreen(pb),
                 middle: toScreen([0, 1, 2].map((c) => 0.5 * (pa[c] + pb[c]))) };
      },
      /** Body i's cue pitch factor now, heard at the camera (1 with Doppler off). */
      pitchFactor(i) {
        const l = camera ? camera.position : { x: centre[0], y: centre[1], z: centre[2] + 2 * size };
        return sound.pitchFactor(i, clock.t, l);
      },
      doppler() { return sound.doppler; },
      renderCueOffline(i, seconds, hrtf) { return sound.renderOffline(i, seconds || 0.4, hrtf); },
    };
    seek(begin);
    requestAnimationFrame(frame);
  }
})();
