"""An HTTP server that requires NTLMv2 for /private/, for trawl's tests.

Run with Debian's Python (it imports python3-ntlm-auth):
  /usr/bin/python3 ntlm-server.py IP PORT USER PASSWORD DOMAIN ACCESS_LOG

NTLM authenticates a connection: the NEGOTIATE and AUTHENTICATE messages
must come on the connection that got the CHALLENGE, and the server keeps
each connection's state (its challenge, and whether it is authenticated).
The NTLMv2 response is checked by recomputing it with ntlm_auth (its
NTOWFv2 and NTLMv2 response functions) from the client's own blob; the
access log gets one line per request: `user "GET path HTTP/1.1" status`.
Prints "ready" when it listens.
"""
import base64
import hmac
import os
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ntlm_auth.compute_response import ComputeResponse, get_windows_timestamp
from ntlm_auth.constants import AvId
from ntlm_auth.messages import TargetInfo

IP, PORT, USER, PASSWORD, DOMAIN, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
LOCK = threading.Lock()
SIGNATURE = b'NTLMSSP\x00'
PAGES = {
    '/index.html': '<html><head><title>Home</title></head><body><a href="/private/a.html">a</a> <a href="/private/b.html">b</a> <a href="/private/c.html">c</a></body></html>',
    '/private/a.html': '<html><head><title>A</title></head><body>A</body></html>',
    '/private/b.html': '<html><head><title>B</title></head><body>B</body></html>',
    '/private/c.html': '<html><head><title>C</title></head><body>C</body></html>',
}


def field(msg, at):
    length, _, offset = struct.unpack('<HHI', msg[at:at + 8])
    return msg[offset:offset + length]


def challenge_message(server_challenge, target_info):
    flags = 0x00000001 | 0x00000004 | 0x00000200 | 0x00008000 | 0x00080000 | 0x00800000 | 0x20000000 | 0x80000000
    target_name = DOMAIN.encode('utf-16-le')
    head_len = 48
    msg = SIGNATURE + struct.pack('<I', 2)
    msg += struct.pack('<HHI', len(target_name), len(target_name), head_len)
    msg += struct.pack('<I', flags) + server_challenge + b'\x00' * 8
    msg += struct.pack('<HHI', len(target_info), len(target_info), head_len + len(target_name))
    return msg + target_name + target_info


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def setup(self):
        super().setup()
        self.ntlm_challenge = None
        self.ntlm_target_info = None
        self.ntlm_user = None

    def log_message(self, *args):
        pass

    def note(self, user, status):
        with LOCK, open(LOG, 'a') as f:
            f.write('%s "GET %s HTTP/1.1" %d\n' % (user or '-', self.path, status))

    def answer(self, status, body=b'', headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Type', 'text/html')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        page = PAGES.get(self.path)
        if page is None:
            self.note(None, 404)
            return self.answer(404)
        if not self.path.startswith('/private/') or self.ntlm_user is not None:
            self.note(self.ntlm_user, 200)
            return self.answer(200, page.encode())
        auth = self.headers.get('Authorization', '')
        if not auth.startswith('NTLM '):
            self.note(None, 401)
            return self.answer(401, headers=[('WWW-Authenticate', 'NTLM')])
        msg = base64.b64decode(auth[5:])
        kind = struct.unpack('<I', msg[8:12])[0] if msg[:8] == SIGNATURE else 0
        if kind == 1:
            self.ntlm_challenge = os.urandom(8)
            info = TargetInfo()
            info[AvId.MSV_AV_NB_DOMAIN_NAME] = DOMAIN.encode('utf-16-le')
            info[AvId.MSV_AV_NB_COMPUTER_NAME] = b'T\x00R\x00A\x00W\x00L\x00'
            info[AvId.MSV_AV_TIMESTAMP] = get_windows_timestamp()
            self.ntlm_target_info = info.pack()
            self.note('negotiate', 401)
            return self.answer(401, headers=[('WWW-Authenticate', 'NTLM ' + base64.b64encode(challenge_message(self.ntlm_challenge, self.ntlm_target_info)).decode())])
        if kind == 3 and self.ntlm_challenge is not None:
            nt = field(msg, 20)
            domain = field(msg, 28).decode('utf-16-le')
            user = field(msg, 36).decode('utf-16-le')
            temp = nt[16:]
            timestamp, client_challenge = temp[8:16], temp[16:24]
            info = TargetInfo()
            info.unpack(temp[28:])
            expected, _ = ComputeResponse._get_NTLMv2_response(user, PASSWORD, domain, self.ntlm_challenge, client_challenge, timestamp, info)
            echoed = info.pack() == self.ntlm_target_info
            if user.lower() == USER.lower() and domain.upper() == DOMAIN.upper() and echoed and hmac.compare_digest(expected, nt):
                self.ntlm_user = user
                self.note(user, 200)
                return self.answer(200, page.encode())
            self.note(user or 'unknown', 401)
            return self.answer(401, headers=[('WWW-Authenticate', 'NTLM')])
        # an AUTHENTICATE on a connection that got no CHALLENGE, or garbage
        self.note('no-challenge' if kind == 3 else 'garbage', 401)
        return self.answer(401, headers=[('WWW-Authenticate', 'NTLM')])


server = ThreadingHTTPServer((IP, PORT), Handler)
server.daemon_threads = True
print('ready', flush=True)
server.serve_forever()
