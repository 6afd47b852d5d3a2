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
import csv
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


def check_serve(args, tmp, runfile, rows):
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kanoko", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
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
        ring = os.path.join(tmp, "ring.kntj")
        ring_html = os.path.join(tmp, "ring.html")
        run([args.kanoko, "simulate", os.path.join(args.source, "traces/fib22-ring.kntr"), "--mapping",
             os.path.join(args.source, "mappings/paper-fibonacci.toml"), "-o", ring])
        run([args.kanoko, "share", ring, "-o", ring_html])
        rows = {}
        with open(os.path.join(tmp, "mesh.csv"), newline="") as f:
            for row in csv.DictReader(f):
                rows.setdefault(int(row["body"]), []).append(row)

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
            check("msgs sent (so far)" in lines and "springs to" in lines and "speed" in lines,
                  "the panel lists the desktop's statistics: " + ", ".join(lines))

            # Fly navigation: F switches to it, W moves the camera forward.
            before = driver.execute_script("return kanoko.camera()")
            canvas = driver.find_element(By.ID, "scene")
            ActionChains(driver).send_keys_to_element(canvas, "f").key_down("w").pause(0.5).key_up("w").perform()
            after = driver.execute_script("return kanoko.camera()")
            moved = sum((a - b) ** 2 for a, b in zip(after["position"], before["position"])) ** 0.5
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
            driver.set_script_timeout(20)
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

            # Sound cues while playing: the paper's ring run has some (the mesh has none by default).
            driver.get("file://" + ring_html)
            wait_for(driver, "return !!window.kanoko")
            cue_times = driver.execute_script("return kanoko.cueTimes()")
            check(len(cue_times) > 0, "the ring page has sound cues (%d)" % len(cue_times))
            driver.find_element(By.ID, "sound").click()
            check(wait_for(driver, "return kanoko.sound().on"), "Sound on starts Web Audio")
            first = cue_times[0]
            driver.execute_script("kanoko.seek(arguments[0])", first - 0.01 * (driver.execute_script("return kanoko.end - kanoko.begin")))
            driver.find_element(By.ID, "play").click()
            played = wait_for(driver, "return kanoko.sound().played", 5)
            driver.find_element(By.ID, "play").click()
            check(played and played > 0, "playing across a cue plays it (%s)" % played)

            errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            check(not errors, "no console errors: %s" % errors)
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

        check_serve(args, tmp, runfile, rows)

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
