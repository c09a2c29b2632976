#!/usr/bin/env python3
"""An HTTP/1.1 server that sends every file with Transfer-Encoding: chunked,
in chunks of varying sizes (with an extension on some and a trailer at the
end), for `weir fetch`'s chunked decoding. Usage: chunked_server.py DIR PORT"""
import http.server
import os
import socket
import sys


class Chunked(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        path = os.path.join(sys.argv[1], self.path.lstrip("/"))
        try:
            data = open(path, "rb").read()
        except OSError:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        off, size = 0, 1
        while off < len(data):
            piece = data[off:off + size]
            ext = b";x=y" if size % 3 == 0 else b""
            self.wfile.write(b"%x%s\r\n%s\r\n" % (len(piece), ext, piece))
            off += len(piece)
            size = size * 7 % 100003 + 1
        self.wfile.write(b"0\r\nX-Check: done\r\n\r\n")

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6  # dual-stack: IPv4 peers arrive mapped


Server(("::", int(sys.argv[2])), Chunked).serve_forever()
