#!/usr/bin/python3
"""RTSP test server: GStreamer's gst-rtsp-server serving a clip in an endless loop, like an IP camera.

Debian's /usr/bin/python3 (with python3-gi, gir1.2-gst-rtsp-server-1.0, gstreamer1.0-plugins-{base,good,bad}).
ffmpeg plays the clip at real-time pace, looped, as RTP into a loopback UDP port; the shared RTSP media
reads it (a live source: every client joins the same running stream) and payloads the H.264 as RTP.

  rtsp-server.py --port 8554 --clip camera.ts [--address 127.0.0.1] [--path /cam] [--auth user:pass]

With --auth, every request needs HTTP Basic credentials (401 otherwise). Prints "ready rtsp://..." once
the server accepts connections; runs until SIGTERM/SIGINT (and stops its ffmpeg).
"""
import argparse
import signal
import socket
import subprocess
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def free_udp_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class OneMediaFactory(GstRtspServer.RTSPMediaFactory):
    """A shared media keyed by the path alone. The default key also holds the port of the request URL, and
    clients that reach the server through a relay (the service's pinned relay, each on a port of its own) would
    each get a media of their own: several udpsrc on the feeder's one UDP port, of which only one receives."""

    def do_gen_key(self, url):
        return url.abspath


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--address", default="127.0.0.1", help="address to listen on (default: loopback)")
    ap.add_argument("--clip", required=True, help="MPEG-TS file with H.264 video")
    ap.add_argument("--path", default="/cam")
    ap.add_argument("--auth", default="", help="user:pass for Basic authentication")
    ap.add_argument("--ffmpeg", default="ffmpeg")
    a = ap.parse_args()

    Gst.init(None)
    udp = free_udp_port()
    feeder = subprocess.Popen(
        [a.ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-stream_loop", "-1",
         "-i", a.clip, "-map", "0:v:0", "-c", "copy", "-f", "rtp", "-payload_type", "96",
         f"rtp://127.0.0.1:{udp}?pkt_size=1200"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # the SDP it prints
    )

    server = GstRtspServer.RTSPServer()
    server.set_address(a.address)
    server.set_service(str(a.port))
    factory = OneMediaFactory()
    factory.set_launch(
        f"( udpsrc address=127.0.0.1 port={udp} buffer-size=4194304 "
        f'caps="application/x-rtp,media=(string)video,clock-rate=(int)90000,encoding-name=(string)H264,payload=(int)96" '
        f"! rtph264depay ! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
    )
    factory.set_shared(True)
    # TCP interleaved is what we test; UDP stays available as a real camera would offer it.
    if a.auth:
        user, _, password = a.auth.partition(":")
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", "viewer")
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        server.set_auth(auth)
        perms = GstRtspServer.RTSPPermissions()
        perms.add_permission_for_role("viewer", "media.factory.access", True)
        perms.add_permission_for_role("viewer", "media.factory.construct", True)
        factory.set_permissions(perms)
    server.get_mount_points().add_factory(a.path, factory)
    if server.attach(None) == 0:
        print(f"cannot listen on {a.address}:{a.port}", file=sys.stderr)
        feeder.kill()
        return 1

    loop = GLib.MainLoop()

    def stop(*_args):
        loop.quit()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    GLib.timeout_add(500, lambda: (feeder.poll() is None) or (loop.quit() or False))
    print(f"ready rtsp://{a.address}:{a.port}{a.path}", flush=True)
    try:
        loop.run()
    finally:
        feeder.kill()
        feeder.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
