"""A plain-socket RESP client for the benchmarks (nothing but Python needed): a benchmark, not
product code."""
import socket


class Redis:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ValueError(line)

    def pipeline(self, commands):
        self.s.sendall(b"".join(self.encode(c) for c in commands))
        return [self._reply() for _ in commands]

    def cmd(self, *args):
        r = self.pipeline([args])[0]
        if isinstance(r, RuntimeError):
            raise r
        return r


def script_dirs(lua):
    """Where a scripts directory keeps each part: this layout (lua/lease/v1, lua/lease/v2,
    lua/lease for what both formats share, lua/store) or an earlier version's (lua/, lua/v2/)."""
    import os
    if os.path.isdir(os.path.join(lua, "lease")):
        return {1: os.path.join(lua, "lease", "v1"), 2: os.path.join(lua, "lease", "v2"),
                "shared": os.path.join(lua, "lease"), "store": os.path.join(lua, "store")}
    return {1: lua, 2: os.path.join(lua, "v2"), "shared": lua, "store": lua}
