#!/usr/bin/python3
"""The page `kanoko share` writes and `kanoko serve` serves, in headless Chromium with no network.

Simulates the paper's 3x3x3 mesh, shares it, opens the page and checks: no console errors and no
resource fetched; at a seeked time the canvas shows each body's colour where the run puts it
(pixels of a screenshot against the page's projection of the run's positions, which are checked
against `kanoko export`); clicking a body shows its statistics (checked against the CSV); the scrub
bar seeks; an OfflineAudioContext render of a body's cue is louder in the left channel for the
leftmost body and in the right one for the rightmost; a browser without WebGL gets a message.
Then `kanoko serve`: the same page reading the run from the server shows the run's positions and
statistics; it follows a run still being written (blocks appended, then the run renamed into place);
paths outside the run, bad ranges, a second server on the port and a deleted run are refused.
"""
import argparse
import base64
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def decode_png(data):
    """RGB(A) 8-bit non-interlaced PNG -> (width, height, channels, rows of bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG layout"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit("command failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return r


def start_browser(args, extra=()):
    options = Options()
    options.binary_location = args.chromium
    for flag in ("--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                 "--window-size=1000,720", "--force-device-scale-factor=1", "--hide-scrollbars",
                 "--autoplay-policy=no-user-gesture-required",
                 # No network: every host resolves to nothing and any proxy use fails.
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=127.0.0.1:9",
                 "--disable-background-networking", "--no-first-run", *extra):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(args.chromedriver), options=options)


def open_page(driver, html):
    driver.get(html if html.startswith("http") else "file://" + html)
    for _ in range(100):
        if driver.execute_script("return !!window.kanoko"):
            return True
        time.sleep(0.1)
    return False

def http(url, headers=None):
    """(status, body) of a GET, without raising for HTTP errors."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def start_server(args, run, cwd):
    server = subprocess.Popen([args.kanoko, "serve", run, "--port", "0"], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    return server, port


def wait_for(driver, script, seconds=10):
    deadline = time.time() + seconds
    value = None
    while time.time() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    return value


def check_serve(args, tmp, runfile, rows, shared_cues):
    """kanoko serve: the page reading the run by range requests, following a run being written."""
    raw = open(runfile, "rb").read()
    n_bodies, n_stats, block_frames = struct.unpack_from("<III", raw, 16)
    frames_offset, frame_stride = struct.unpack_from("<QQ", raw, 32)
    (frame_count,) = struct.unpack_from("<Q", raw, 104)
    block_bytes = block_frames * frame_stride + 48
    # A run "being simulated": the writer's temporary file with two whole blocks and half of the
    # third being written, no completion record.
    live = os.path.join(tmp, "live.kntj")
    partial = live + ".tmp-4242"
    written = frames_offset + 2 * block_bytes + block_bytes // 2
    with open(partial, "wb") as f:
        f.write(raw[:96] + bytes(48) + raw[144:written])
    server, port = start_server(args, "live.kntj", tmp)
    url = "http://127.0.0.1:%d/" % port
    try:
        status, _ = http(url + "etc/passwd")
        check(status == 404, "a path outside the run is refused (%d)" % status)
        for path in ("live.kntj", "../live.kntj", "run.kntj/../../live.kntj", "run.kntj.tmp-4242", "%2e%2e/live.kntj"):
            status, body = http(url + path)
            check(status == 404, "/%s is refused (%d)" % (path, status))
        for path in ("traffic.json?t=abc", "traffic.json", "partners.json?t=1&body=99", "partners.json?t=1&body=1.5"):
            status, body = http(url + path)
            check(status == 400 and body.startswith(b"kanoko serve: "), "/%s is refused: %r" % (path, body.strip()))
        status, body = http(url + "run.kntj", {"Range": "bytes=abc"})
        check(status == 416, "a malformed range is refused (%d %r)" % (status, body[:60]))
        status, _ = http(url + "run.kntj", {"Range": "bytes=%d-" % (10 * len(raw))})
        check(status == 416, "a range past the run is refused (%d)" % status)
        status, body = http(url + "run.kntj", {"Range": "bytes=0-143"})
        check(status == 206 and body[:8] == b"KANOKOTJ", "the header by a range request (%d)" % status)
        status, body = http(url + "run.kntj")
        check(status == 200 and len(body) == frames_offset + 2 * block_bytes, "only whole blocks of a partial run (%d bytes)" % len(body))
        second = subprocess.run([args.kanoko, "serve", runfile, "--port", str(port)], capture_output=True, text=True, timeout=20)
        check(second.returncode == 1 and "in use" in second.stderr, "a port in use: %s" % second.stderr.strip())

        driver = start_browser(args)
        try:
            check(open_page(driver, url), "the served page starts")
            frames = wait_for(driver, "return kanoko.frames")
            check(frames == 2 * block_frames, "the page sees the frames written so far (%s)" % frames)
            # The cues of the frames served so far: none after the last of them.
            partial_end = wait_for(driver, "return kanoko.end")
            partial_cues = wait_for(driver, "return kanoko.cues > 0 && kanoko.cueTimes()")
            check(bool(partial_cues) and max(partial_cues) <= partial_end < shared_cues[-1],
                  "the growing run's page has the cues of its frames so far (%d, up to %s s of %s)"
                  % (len(partial_cues or []), partial_end, shared_cues[-1]))
            # Blocks appended by the writer: the page follows.
            with open(partial, "ab") as f:
                f.write(raw[written:frames_offset + 4 * block_bytes + block_bytes // 3])
            frames = wait_for(driver, "return kanoko.frames === %d && kanoko.frames" % (4 * block_frames))
            check(frames == 4 * block_frames, "the page follows blocks as they are written (%s)" % frames)
            # The run completes: written whole under its name, the temporary file gone.
            with open(live, "wb") as f:
                f.write(raw)
            os.remove(partial)
            frames = wait_for(driver, "return kanoko.frames === %d && kanoko.frames" % frame_count)
            check(frames == frame_count, "the page follows the run to its end (%s of %d frames)" % (frames, frame_count))
            last = max(float(r["time_s"]) for r in rows[0])
            end = wait_for(driver, "return kanoko.end >= %r && kanoko.end" % (last - 1e-9))
            check(abs(end - last) < 1e-12, "the page's end is the run's (%s vs %s)" % (end, last))
            cues = wait_for(driver, "return kanoko.cues === %d && kanoko.cueTimes()" % len(shared_cues))
            check(cues == shared_cues, "the completed run's page has the shared page's %d cues (%d)"
                  % (len(shared_cues), len(cues or [])))
            # Positions and statistics at a seeked frame, from the streamed blocks.
            times = sorted({float(r["time_s"]) for r in rows[0]})
            t = times[int(0.7 * len(times))]
            driver.execute_script("kanoko.seek(arguments[0])", t)
            wait_for(driver, "return !isNaN(kanoko.describe(0).split('mass')[1].trim().split(' ')[0])")
            driver.execute_script("kanoko.seek(arguments[0])", t)
            worst = 0.0
            for i in range(n_bodies):
                row = next(r for r in rows[i] if float(r["time_s"]) == t)
                p = driver.execute_script("return kanoko.position(arguments[0])", i)
                worst = max(worst, max(abs(p[c] - float(row[a])) for c, a in enumerate("xyz")))
            check(worst < 1e-9, "served positions are the run's at t = %.3f s (worst %.2g)" % (t, worst))
            text = driver.execute_script("return kanoko.describe(3)")
            row = next(r for r in rows[3] if float(r["time_s"]) == t)
            lines = {l[:22].strip(): l[22:].strip() for l in text.split("\n") if len(l) > 22}
            check(lines.get("mass") == "%.6g" % float(row["mass"]), "served statistics: mass %s (run %.6g)" % (lines.get("mass"), float(row["mass"])))
            # Top partners and spring traffic colours from the server (/partners.json, /traffic.json).
            driver.execute_script("kanoko.describe(3)")
            wait_for(driver, "return kanoko.settled() && kanoko.describe(3).indexOf('top partners') >= 0")
            shown = partner_lines(driver.execute_script("return kanoko.describe(3)"))
            want = expected_partners(live, 3, t, [rows[i][0]["name"] for i in range(n_bodies)], False)
            check(shown == want, "served top partners are the run's traffic so far: %s (run: %s)" % (shown, want))
            check_spring_colours(driver, "traffic")
            errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            check(not errors, "no console errors on the served page: %s" % errors)
        finally:
            driver.quit()
        # The run deleted while served.
        os.remove(live)
        status, body = http(url + "run.kntj", {"Range": "bytes=0-143"})
        check(status == 410 and b"deleted" in body, "a deleted run is no longer served (%d %r)" % (status, body.strip()))
    finally:
        server.terminate()
        server.wait(timeout=20)
    err = server.stderr.read()
    check("was deleted" in err, "the terminal says the run was deleted: %r" % err.strip())


def format_bytes(v):
    """As the desktop panel writes bytes: KiB, MiB, ... from 1 KiB on with 4 digits, else %.6g B."""
    if abs(v) < 1024:
        return "%.6g B" % v
    x, units = v / 1024, ["KiB", "MiB", "GiB", "TiB"]
    u = 0
    while abs(x) >= 1024 and u + 1 < len(units):
        x /= 1024
        u += 1
    return "%.4g %s" % (x, units[u])


def partner_lines(text):
    """The values of the panel's top partners lines (the last lines of a body's panel)."""
    lines = text.split("\n")
    first = next((k for k, l in enumerate(lines) if l.startswith("top partners")), None)
    return [] if first is None else [l[22:].strip() for l in lines[first:] if l.strip()]


def run_sections(runfile):
    """The run file's bytes, a function giving a section's (offset, size), and its meta keys."""
    raw = open(runfile, "rb").read()
    def section(name):
        at = raw.find(name.encode().ljust(16, b"\0"))
        assert at > 0, "no %s section" % name
        (size,) = struct.unpack_from("<Q", raw, at + 16)
        return at + 24, size
    at, size = section("meta")
    meta = dict(l.split("=", 1) for l in raw[at:at + size].decode().splitlines() if "=" in l)
    return raw, section, meta


def expected_interval(runfile, t):
    """The desktop inspect panel's "interval" line for frame time t (src/scene/inspect.cpp)."""
    _, _, meta = run_sections(runfile)
    interval, begin, end = float(meta["interval_s"]), float(meta["trace_begin_s"]), float(meta["trace_end_s"])
    if t > end:
        return "settling (after the trace)"
    k = int((t - begin) // interval) if t > begin else 0
    t0 = begin + k * interval
    return "[%.6g, %.6g) s" % (t0, max(t0, min(end, t0 + interval)))


def expected_partners(runfile, body, t, names, as_float32):
    """Body's top 3 partners by bytes so far (both ways) at trace time t, read from the run's
    `traffic` section (docs/trajectory-format.md) here, as the desktop panel lists them (the
    shared page stores the bytes as 32-bit floats, the server sends doubles)."""
    raw, section, meta = run_sections(runfile)
    interval, begin = float(meta["interval_s"]), float(meta["trace_begin_s"])
    b = int((t - begin) // interval) if t > begin else 0
    at, _ = section("traffic")
    n_bins, _ = struct.unpack_from("<QQ", raw, at)
    offsets = struct.unpack_from("<%dQ" % (n_bins + 1), raw, at + 16)
    records = at + 16 + 8 * (n_bins + 1)
    sent, received = {}, {}
    for r in range(offsets[min(b + 1, n_bins)]):
        src, dst, nbytes, _ = struct.unpack_from("<IIdd", raw, records + 24 * r)
        if src == body and dst != body:
            sent[dst] = sent.get(dst, 0.0) + nbytes
        elif dst == body and src != body:
            received[src] = received.get(src, 0.0) + nbytes
    partners = sorted(set(sent) | set(received), key=lambda p: (-(sent.get(p, 0) + received.get(p, 0)), p))[:3]
    # The page stores the bytes as 32-bit floats.
    f32 = (lambda v: struct.unpack("<f", struct.pack("<f", v))[0]) if as_float32 else (lambda v: v)
    return ["%s: %s (sent %s, recv %s)" % (names[p], format_bytes(f32(sent.get(p, 0)) + f32(received.get(p, 0))),
                                          format_bytes(f32(sent.get(p, 0))), format_bytes(f32(received.get(p, 0))))
            for p in partners] or ["none so far"]


def check_spring_colours(driver, mode):
    """Springs coloured by `mode` as the desktop does: a spring whose tension (or traffic) changes
    between two times changes colour on the screen, where the page draws it; the legend shows it."""
    driver.execute_script("kanoko.springs(arguments[0])", mode)
    begin, end = driver.execute_script("return [kanoko.begin, kanoko.end]")
    count = driver.execute_script("return kanoko.springCount")
    samples = []
    for j in range(9):
        t = begin + (end - begin) * (0.05 + 0.9 * j / 8)
        driver.execute_script("kanoko.seek(arguments[0])", t)
        wait_for(driver, "return kanoko.settled()")  # a served page asks the server for the traffic
        springs = driver.execute_script("return Array.from({length: kanoko.springCount}, (_, e) => kanoko.spring(e))")
        bodies = driver.execute_script("return Array.from({length: kanoko.bodies}, (_, i) => kanoko.project(i))")
        samples.append((t, springs, bodies))
    # The spring and pair of times with the largest colour change, its middle half clear of the bodies.
    def clear(sample, e):
        spring = sample[1][e]
        points = [(spring["a"]["x"] + f * (spring["b"]["x"] - spring["a"]["x"]),
                   spring["a"]["y"] + f * (spring["b"]["y"] - spring["a"]["y"])) for f in (0.25, 0.375, 0.5, 0.625, 0.75)]
        return spring["a"]["visible"] and spring["b"]["visible"] and all(
            ((q["x"] - x) ** 2 + (q["y"] - y) ** 2) ** 0.5 > 30 for q in sample[2] for x, y in points)
    best = None
    for e in range(count):
        for a in range(len(samples)):
            for b in range(a + 1, len(samples)):
                ca, cb = samples[a][1][e]["colour"], samples[b][1][e]["colour"]
                clear_both = clear(samples[a], e) and clear(samples[b], e)
                change = sum(abs(x - y) for x, y in zip(ca, cb))
                if clear_both and (best is None or change > best[0]):
                    best = (change, e, a, b)
    check(best is not None and best[0] >= 60, "%s: a spring changes colour over the run (%s)" % (mode, best and best[0]))
    if best is None:
        return
    _, e, a, b = best
    # The line is one antialiased pixel wide: a drawn pixel is background + w (colour - background).
    # Along the middle half of the spring, the pixel that stands out most near each point.
    background = (16, 20, 24)
    drawn = []
    for k in (a, b):
        driver.execute_script("kanoko.seek(arguments[0])", samples[k][0])
        wait_for(driver, "return kanoko.settled()")
        time.sleep(0.1)
        spring = driver.execute_script("return kanoko.spring(arguments[0])", e)
        width, height, channels, px = decode_png(driver.get_screenshot_as_png())
        pixels = []
        for j in range(21):
            f = 0.25 + 0.5 * j / 20
            x = int(round(spring["a"]["x"] + f * (spring["b"]["x"] - spring["a"]["x"])))
            y = int(round(spring["a"]["y"] + f * (spring["b"]["y"] - spring["a"]["y"])))
            window = [tuple(px[yy][xx * channels + c] for c in range(3)) for yy in range(y - 1, y + 2)
                      for xx in range(x - 1, x + 2) if 0 <= yy < height and 0 <= xx < width]
            pixels.append(max(window, key=lambda p: sum(abs(p[c] - background[c]) for c in range(3))))
        drawn.append((spring["colour"], pixels))

    def misfit(pixels, colour):
        """Median distance of the pixels from the blends of `colour` over the background, relative."""
        d = [colour[c] - background[c] for c in range(3)]
        dd = sum(x * x for x in d) or 1
        out = []
        for p in pixels:
            q = [p[c] - background[c] for c in range(3)]
            w = max(0.0, min(1.0, sum(q[c] * d[c] for c in range(3)) / dd))
            out.append(sum((q[c] - w * d[c]) ** 2 for c in range(3)) ** 0.5 / max(1.0, sum(x * x for x in q) ** 0.5))
        return sorted(out)[len(out) // 2]
    (ca, pa), (cb, pb) = drawn
    own = (misfit(pa, ca), misfit(pb, cb))
    swapped = (misfit(pa, cb), misfit(pb, ca))
    check(own[0] < 0.15 and own[1] < 0.15 and swapped[0] > 2 * own[0] and swapped[1] > 2 * own[1],
          "%s: spring %d is drawn in its colour at two times, %s then %s (misfit %.3f, %.3f; against the other "
          "time's colour %.3f, %.3f)" % (mode, e, ca, cb, own[0], own[1], swapped[0], swapped[1]))
    legend = driver.find_element(By.ID, "spring-legend")
    check(legend.is_displayed() and ("length" in legend.text if mode == "tension" else "bytes" in legend.text),
          "%s: the spring legend says what the colours mean: %r" % (mode, legend.text))


def check_doppler(driver, rows, doppler):
    """The cue pitch factor of a body moving toward the camera (the listener) at radial speed v is
    OpenAL's c / (c - v), as the desktop's (doppler factor 1, c = 4 x the run's fastest body from the
    CSV's velocities), within 1 %; moving away it is below 1; with Doppler off exactly 1."""
    n = len(rows)
    times = sorted({float(r["time_s"]) for r in rows[0]})
    at = {i: {float(r["time_s"]): r for r in rows[i]} for i in range(n)}
    c = 4 * max((float(r["vx"]) ** 2 + float(r["vy"]) ** 2 + float(r["vz"]) ** 2) ** 0.5 for i in range(n) for r in rows[i])
    # The fastest body between two stored frames (the page's velocity: their positions' difference).
    best = None
    for k in range(len(times) // 4, 3 * len(times) // 4):
        dt = times[k + 1] - times[k]
        for i in range(n):
            a, b = at[i][times[k]], at[i][times[k + 1]]
            v = [(float(b[x]) - float(a[x])) / dt for x in "xyz"]
            speed = sum(x * x for x in v) ** 0.5
            if best is None or speed > best[0]:
                best = (speed, k, i, v)
    speed, k, i, v = best
    driver.execute_script("kanoko.seek(arguments[0])", times[k])
    p = driver.execute_script("return kanoko.position(arguments[0])", i)
    unit = [x / speed for x in v]
    span = max(abs(float(rows[j][0][x]) - float(rows[0][0][x])) for j in range(n) for x in "xyz")
    for label, sign, expected in (("toward", 1, c / (c - speed)), ("away from", -1, c / (c + speed))):
        eye = [p[a] + sign * span * unit[a] for a in range(3)]
        driver.execute_script("kanoko.setCamera(arguments[0], arguments[1])", eye, p)
        factor = driver.execute_script("return kanoko.pitchFactor(arguments[0])", i)
        if doppler:
            check(abs(factor - expected) <= 0.01 * expected and (factor > 1) == (sign > 0),
                  "Doppler: body %d moving %s the listener at %.4g (c = %.4g) has pitch factor %.5f (c / (c %s v) = %.5f)"
                  % (i, label, speed, c, factor, "-" if sign > 0 else "+", expected))
        else:
            check(factor == 1, "Doppler off: body %d moving %s the listener keeps its pitch (%r)" % (i, label, factor))


def check_cues_play(driver, first, page):
    """Sound on, then playing across the first cue (at trace time `first`) plays it; no console errors."""
    driver.find_element(By.ID, "sound").click()
    check(wait_for(driver, "return kanoko.sound().on"), "Sound on starts Web Audio on %s" % page)
    driver.execute_script("kanoko.seek(arguments[0])", first - 0.01 * driver.execute_script("return kanoko.end - kanoko.begin"))
    driver.find_element(By.ID, "play").click()
    played = wait_for(driver, "return kanoko.sound().played", 5)
    driver.find_element(By.ID, "play").click()
    check(played and played > 0, "playing across a cue on %s plays it (%s)" % (page, played))
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "no console errors on %s: %s" % (page, errors))


def check_serve_cues(args, tmp, ring, shared_cues):
    """A served page gets the sound cues the server detects for the frames it serves: those of the
    shared page for a complete run, and it plays them."""
    server, port = start_server(args, ring, tmp)
    url = "http://127.0.0.1:%d/" % port
    try:
        status, body = http(url + "cues.json")
        check(status == 200 and body.startswith(b'{"times":['), "/cues.json serves the cues (%d %r)" % (status, body[:40]))
        driver = start_browser(args)
        try:
            check(open_page(driver, url), "the served ring page starts")
            served = wait_for(driver, "return kanoko.cues === %d && kanoko.cueTimes()" % len(shared_cues))
            check(bool(served) and len(served) == len(shared_cues) and
                  all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for a, b in zip(served, shared_cues)),
                  "the served page has the shared page's %d sound cues (%s)" % (len(shared_cues), len(served or [])))
            legend = wait_for(driver, "const t = document.getElementById('legend-summary').textContent;"
                                      " return t.endsWith(' %d sound cues') && t" % len(shared_cues), 3)
            check(bool(legend), "the served legend counts them: %s" % (legend or
                  driver.find_element(By.ID, "legend-summary").text))
            check_cues_play(driver, shared_cues[0], "the served page")
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=20)


def page_cue_times(html):
    """The sound cue times a shared page stores (docs/share.md: "What the page stores")."""
    text = open(html, encoding="utf-8").read()
    def block(name):
        start = text.index('<script id="%s"' % name)
        return text[text.index(">", start) + 1:text.index("</script>", start)]
    meta = json.loads(block("kanoko-meta"))
    data = base64.b64decode(block("kanoko-data").strip())
    offset, count = meta["data"]["cue_times"]
    return list(struct.unpack_from("<%dd" % count, data, offset))


def check_shared(args, html, ring_html, quiet, runfile, rows):
    """The page `kanoko share` wrote: in Chromium, then in a browser without WebGL nor Web Audio."""
    driver = start_browser(args)
    try:
        check(open_page(driver, html), "the page starts (window.kanoko)")
        info = driver.execute_script(
            "return {begin: kanoko.begin, end: kanoko.end, bodies: kanoko.bodies, webgl: kanoko.webgl,"
            " cues: kanoko.cues, resources: performance.getEntriesByType('resource').length,"
            " message: document.getElementById('message').hidden}")
        check(info["webgl"], "WebGL works in headless Chromium")
        check(info["message"], "no message shown when WebGL and Web Audio work")
        check(info["resources"] == 0, "nothing fetched (%d resources)" % info["resources"])
        check(info["bodies"] == 27, "27 bodies (%d)" % info["bodies"])
        begin, end = info["begin"], info["end"]
        mesh_cues = driver.execute_script("return kanoko.cueTimes()")
        check(len(mesh_cues) > 0, "the mesh page has sound cues (%d)" % len(mesh_cues))

        # Positions at a seeked time: the page's against the run's (CSV rows at stored frames).
        t = driver.execute_script("return kanoko.seek(arguments[0])", begin + 0.6 * (end - begin))
        times = sorted({float(r["time_s"]) for r in rows[0]})
        t_frame = max(x for x in times if x <= t)
        driver.execute_script("kanoko.seek(arguments[0])", t_frame)
        worst = 0.0
        for i in range(27):
            row = next(r for r in rows[i] if float(r["time_s"]) == t_frame)
            page = driver.execute_script("return kanoko.position(arguments[0])", i)
            for c, axis in enumerate("xyz"):
                worst = max(worst, abs(page[c] - float(row[axis])))
        check(worst < 1e-3, "page positions match the run at t = %.3f s (worst %.2g)" % (t_frame, worst))

        # Pixels: each body's colour at its projected centre (skipping bodies hidden by nearer ones).
        time.sleep(0.2)
        width, height, channels, px = decode_png(driver.get_screenshot_as_png())
        projected = [driver.execute_script("return kanoko.project(arguments[0])", i) for i in range(27)]
        seen, matched = 0, 0
        for i, p in enumerate(projected):
            hidden = any(j != i and abs(q["x"] - p["x"]) < 14 and abs(q["y"] - p["y"]) < 14 and q["depth"] < p["depth"]
                         for j, q in enumerate(projected))
            if hidden or not p["visible"]:
                continue
            seen += 1
            want = driver.execute_script("return kanoko.colour(arguments[0])", i)
            x, y = int(round(p["x"])), int(round(p["y"]))
            best = min(sum(abs(px[yy][xx * channels + c] - want[c]) for c in range(3))
                       for yy in range(y - 2, y + 3) for xx in range(x - 2, x + 3)
                       if 0 <= yy < height and 0 <= xx < width)
            matched += best <= 90
            if best > 90:
                print("      body %d at (%d, %d): colour off by %d from %s" % (i, x, y, best, want))
        check(seen >= 10 and matched == seen, "bodies drawn where the run puts them (%d of %d visible)" % (matched, seen))
        # Click a body: its statistics, as the desktop panel writes them, against the CSV.
        target = next(i for i, p in enumerate(projected)
                      if p["visible"] and not any(j != i and abs(q["x"] - p["x"]) < 20 and abs(q["y"] - p["y"]) < 20
                                                  for j, q in enumerate(projected)))
        action = ActionBuilder(driver)
        action.pointer_action.move_to_location(int(projected[target]["x"]), int(projected[target]["y"]))
        action.pointer_action.click()
        action.perform()
        panel = driver.find_element(By.ID, "panel")
        check(panel.is_displayed(), "clicking body %d opens the panel" % target)
        text = driver.find_element(By.ID, "panel-text").text
        row = [r for r in rows[target] if float(r["time_s"]) <= t_frame][-1]
        name = row["name"]
        check(text.startswith(name), "the panel names the body (%r)" % text.split("\n")[0])
        lines = {l[:22].strip(): l[22:].strip() for l in text.split("\n") if len(l) > 22}
        check(lines.get("mass") == "%.6g" % float(row["mass"]), "mass %s (run: %.6g)" % (lines.get("mass"), float(row["mass"])))
        check(lines.get("load (interval)") == "%.6g" % float(row["load"]),
              "load %s (run: %.6g)" % (lines.get("load (interval)"), float(row["load"])))
        want_interval = expected_interval(runfile, t_frame)
        check(lines.get("interval") == want_interval, "interval %s (run: %s)" % (lines.get("interval"), want_interval))
        if all(k in row for k in ("busy", "communicating", "idle")):
            rest = max(0.0, 1 - sum(float(row[k]) for k in ("busy", "communicating", "idle")))
            check(lines.get("no state (interval)") == "%.1f %%" % (100 * rest),
                  "no state %s (run: %.1f %%)" % (lines.get("no state (interval)"), 100 * rest))
        check("msgs sent (so far)" in lines and "springs to" in lines and "speed" in lines,
              "the panel lists the desktop's statistics: " + ", ".join(lines))
        want = expected_partners(runfile, target, t_frame, [rows[i][0]["name"] for i in range(27)], True)
        shown = partner_lines(text)
        check(len(want) > 0 and shown == want, "the panel's top partners are the run's traffic so far: %s (run: %s)" % (shown, want))
        # Close the panel (its × button) so that it covers no spring the next checks look at.
        driver.find_element(By.ID, "panel-close").click()
        check(not panel.is_displayed(), "the panel's close button closes it")
        check_spring_colours(driver, "tension")
        check_spring_colours(driver, "traffic")
        driver.execute_script("kanoko.springs('tension')")

        # Fly navigation: F switches to it, W moves the camera forward.
        before = driver.execute_script("return kanoko.camera()")
        canvas = driver.find_element(By.ID, "scene")
        # W is held until the camera has moved (a starved browser may draw no frame in 0.5 s).
        ActionChains(driver).send_keys_to_element(canvas, "f").key_down("w").perform()
        deadline = time.time() + 15
        moved = 0.0
        while True:
            after = driver.execute_script("return kanoko.camera()")
            moved = sum((a - b) ** 2 for a, b in zip(after["position"], before["position"])) ** 0.5
            if moved > 0 or time.time() > deadline:
                break
            time.sleep(0.1)
        ActionChains(driver).key_up("w").perform()
        check(after["fly"] and not before["fly"] and moved > 0, "F flies, W moves the camera (by %.3g)" % moved)
        check(driver.find_element(By.ID, "nav").text == "Orbit", "the navigation button offers orbit back")
        ActionChains(driver).send_keys_to_element(canvas, "f").perform()

        # The scrub bar seeks: a click at a quarter of its width.
        scrub = driver.find_element(By.ID, "scrub")
        rect = driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", scrub)
        action = ActionBuilder(driver)
        action.pointer_action.move_to_location(int(rect["left"] + 0.25 * rect["width"]), int(rect["top"] + rect["height"] / 2))
        action.pointer_action.click()
        action.perform()
        fraction = (driver.execute_script("return kanoko.time()") - begin) / (end - begin)
        check(abs(fraction - 0.25) < 0.04, "the scrub bar seeks to a quarter of the run (%.3f)" % fraction)
        dial = driver.find_element(By.ID, "clock-text").text
        check(dial.endswith("(%d%%)" % round(100 * fraction)), "the clock shows the time: %s" % dial)
        # Play advances the clock.
        before = driver.execute_script("return kanoko.time()")
        driver.find_element(By.ID, "play").click()
        played = before
        for _ in range(30):
            time.sleep(0.1)
            played = driver.execute_script("return kanoko.time()")
            if played > before:
                break
        driver.find_element(By.ID, "play").click()
        check(played > before, "play advances the clock (%.3f s to %.3f s)" % (before, played))

        # Sound: a body on the listener's left is louder in the left channel. The camera (the
        # listener) is put beside body 0, looking along -z: the body is at its left (then right).
        size = max(abs(float(rows[i][0][a]) - float(rows[0][0][a])) for i in range(27) for a in "xyz")
        render = "kanoko.renderCueOffline(arguments[0], 0.4, arguments[1]).then(arguments[2])"
        driver.set_script_timeout(60)  # an HRTF render takes seconds on a loaded machine
        p = driver.execute_script("return kanoko.position(0)")
        for side, dx in (("left", size), ("right", -size)):
            eye = [p[0] + dx, p[1], p[2]]
            driver.execute_script("kanoko.setCamera(arguments[0], arguments[1])", eye, [eye[0], eye[1], eye[2] - size])
            other = "right" if side == "left" else "left"
            # HRTF's level difference is smaller at the voices' low pitches (220-880 Hz).
            for hrtf, ratio in ((False, 2.0), (True, 1.2)):
                rms = driver.execute_async_script(render, 0, hrtf)
                louder = rms[side] > ratio * rms[other] and rms[side] > 1e-3
                check(louder, "a body on the listener's %s is louder on the %s with %s (L %.4f, R %.4f)"
                      % (side, side, "HRTF" if hrtf else "equal-power panning", rms["left"], rms["right"]))

        check_doppler(driver, rows, True)

        # Sound cues while playing: the paper's ring run has some (the mesh has none by default).
        driver.get("file://" + ring_html)
        wait_for(driver, "return !!window.kanoko")
        cue_times = driver.execute_script("return kanoko.cueTimes()")
        check(len(cue_times) > 0, "the ring page has sound cues (%d)" % len(cue_times))
        check_cues_play(driver, cue_times[0], "the shared page")

        # --doppler off: the pitch never moves.
        check(open_page(driver, quiet), "the page shared with --doppler off starts")
        check(not driver.find_element(By.ID, "doppler").is_selected(), "--doppler off: the Doppler box is off")
        check_doppler(driver, rows, False)
    finally:
        driver.quit()

    # A browser without WebGL nor Web Audio: clear messages on the page, the rest still works.
    driver = start_browser(args, ("--disable-3d-apis",))
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                               {"source": "delete window.AudioContext; delete window.webkitAudioContext;"})
        open_page(driver, html)
        message = driver.find_element(By.ID, "message")
        check(message.is_displayed() and "WebGL" in message.text, "without WebGL: %r" % message.text)
        check("no Web Audio" in message.text and not driver.find_element(By.ID, "sound").is_enabled(),
              "without Web Audio: the message says so and the sound button is off")
        check(driver.execute_script("return kanoko.seek(kanoko.end) === kanoko.end"), "without WebGL the clock works")
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kanoko", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--part", choices=("all", "shared", "served"), default="all",
                        help="the shared page, the served one, or both")
    args = parser.parse_args()
    args.kanoko = os.path.abspath(args.kanoko)

    with tempfile.TemporaryDirectory(prefix="kanoko-share-") as tmp:
        runfile = os.path.join(tmp, "mesh.kntj")
        html = os.path.join(tmp, "mesh.html")
        run([args.kanoko, "simulate", os.path.join(args.source, "traces/mesh-skewed-light.kntr"), "--mapping",
             os.path.join(args.source, "mappings/paper-mesh.toml"), "-o", runfile])
        shared = run([args.kanoko, "share", runfile, "-o", html])
        print(shared.stderr.strip())
        run([args.kanoko, "export", runfile, "-o", os.path.join(tmp, "mesh.csv")])
        rows = {}
        with open(os.path.join(tmp, "mesh.csv"), newline="") as f:
            for row in csv.DictReader(f):
                rows.setdefault(int(row["body"]), []).append(row)
        ring = os.path.join(tmp, "ring.kntj")
        ring_html = os.path.join(tmp, "ring.html")
        run([args.kanoko, "simulate", os.path.join(args.source, "traces/fib22-ring.kntr"), "--mapping",
             os.path.join(args.source, "mappings/paper-fibonacci.toml"), "-o", ring])
        run([args.kanoko, "share", ring, "-o", ring_html])
        quiet = os.path.join(tmp, "mesh-no-doppler.html")
        run([args.kanoko, "share", runfile, "-o", quiet, "--doppler", "off"])

        if args.part in ("all", "shared"):
            check_shared(args, html, ring_html, quiet, runfile, rows)
        if args.part in ("all", "served"):
            check_serve(args, tmp, runfile, rows, page_cue_times(html))
            check_serve_cues(args, tmp, ring, page_cue_times(ring_html))

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
