#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""servers.py SERVER: one Debian server under stack reclaim, driven over
loopback by its own clients; prints TAP (plan last) and one
"@@RK-SERVER name|..." row for the host's table.

SERVER is memcached, redis or mariadb (as their Debian units start them;
the image sets memcached -t 16 -c 4096, redis io-threads 4, mariadb
max_connections 1100), or jvm (RkPool.java, a 1,000-thread pool, as
rk-jvm.service). The steps:
  0. restart the unit (start the JVM's) and wait until it answers;
  1. open CONNS (rk.conns=, 1000) idle connections, each answered once
     (memcached "version", redis and jvm PING, mariadb SELECT 1), and
     store one key per connection;
  2. idle past the shrinker's 1.5 s age bar; KernelStack (/proc/meminfo) and
     the unit's memcg kernel_stack; five first requests on idle
     connections, unreclaimed: wake-to-answer latency "before";
  3. forced reclaim (drop_caches until KernelStack stops falling), the same
     figures again, the census of every thread, then five rounds of
     "reclaim, one request on a connection idle since": latency "after";
  4. every connection asks for its own key: each answer checked;
  5. load from the package's own benchmark client (memcslap,
     redis-benchmark, mariadb-slap; redis-benchmark for the jvm), reclaim
     again, every key checked again.
"""
import os
import socket
import statistics
import subprocess
import sys
import time

from rktap import drop_slab, finish, note, tap


def cmdline_int(key, default):
    with open("/proc/cmdline") as f:
        for word in f.read().split():
            if word.startswith(key + "="):
                return int(word.split("=", 1)[1])
    return default


CONNS = cmdline_int("rk.conns", 1000)
CENSUS = "/usr/local/bin/census"


def meminfo_kb(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def memcg_stack_kb(unit):
    """kernel_stack of the unit's memory cgroup in KiB, None without one."""
    path = "/sys/fs/cgroup/system.slice/%s/memory.stat" % unit
    try:
        with open(path) as f:
            for line in f:
                k, v = line.split()
                if k == "kernel_stack":
                    return int(v) // 1024
    except OSError:
        return None
    return None


def main_pid(unit):
    out = subprocess.run(["systemctl", "show", "-p", "MainPID", "--value", unit],
                         capture_output=True, text=True).stdout.strip()
    return int(out) if out.isdigit() and out != "0" else None


def nthreads(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def reclaim():
    """drop_caches 2 (the stack shrinker with the other slab shrinkers) until KernelStack stops
    falling for three rounds, at most 40 rounds."""
    best, still = meminfo_kb("KernelStack"), 0
    for _ in range(40):
        drop_slab()
        time.sleep(0.1)
        cur = meminfo_kb("KernelStack")
        still = still + 1 if cur >= best else 0
        best = min(best, cur)
        if still == 3:
            break


def census(where):
    out = subprocess.run([CENSUS], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        print("@@RK-CENSUS %s %s" % (where, line))
    return out.returncode == 0


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.f = self.s.makefile("rb")

    def close(self):
        self.s.close()

    def send(self, data):
        self.s.sendall(data)

    def line(self):
        got = self.f.readline()
        if not got.endswith(b"\r\n"):
            raise IOError("connection closed mid-reply")
        return got[:-2]


class Memcached:
    unit, port = "memcached.service", 11211

    def connect(self):
        return Conn(self.port)

    def hello(self, c):
        c.send(b"version\r\n")
        return c.line().startswith(b"VERSION ")

    def set(self, c, key, val):
        c.send(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val))
        return c.line() == b"STORED"

    def get(self, c, key):
        c.send(b"get %s\r\n" % key)
        head = c.line()
        if head == b"END":
            return None
        val = c.line()
        return val if c.line() == b"END" and head.startswith(b"VALUE ") else None

    def load(self):
        cmd = ["memcslap", "--servers=127.0.0.1:11211", "--concurrency=32",
               "--execute-number=200"]
        return subprocess.run(cmd, capture_output=True, text=True)


class Redis:
    unit, port = "redis-server.service", 6379

    def connect(self):
        return Conn(self.port)

    @staticmethod
    def cmd(c, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        c.send(out)
        head = c.line()
        if head[:1] == b"$":
            n = int(head[1:])
            if n < 0:
                return None
            val = c.f.read(n + 2)
            return val[:-2] if val.endswith(b"\r\n") else b"<short>"
        if head[:1] == b"*":
            return [Redis.reply_bulk(c) for _ in range(int(head[1:]))]
        return head

    @staticmethod
    def reply_bulk(c):
        n = int(c.line()[1:])
        return c.f.read(n + 2)[:-2]

    def hello(self, c):
        return self.cmd(c, b"PING") == b"+PONG"

    def set(self, c, key, val):
        return self.cmd(c, b"SET", key, val) == b"+OK"

    def get(self, c, key):
        return self.cmd(c, b"GET", key)

    def load(self):
        cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-q",
               "-n", "20000", "-c", "50", "-t", "set,get", "--threads", "2"]
        return subprocess.run(cmd, capture_output=True, text=True)


class Jvm(Redis):
    """RkPool.java under openjdk-17-jre-headless (rk-jvm.service, started
    here: no Debian package runs a JVM server): 1,000 pool threads parked
    in futex waits and one selector thread; it speaks enough of the Redis
    protocol for the Redis client above and redis-benchmark."""
    unit, port = "rk-jvm.service", 11311


class Mariadb:
    """Thread per connection (Debian's default); the image allows 1,100
    connections. A user rk and a table rk.kv, made with the mariadb client
    over the root socket."""
    unit = "mariadb.service"
    setup_sql = ("CREATE USER IF NOT EXISTS rk@'127.0.0.1' IDENTIFIED BY 'rk';"
                 "GRANT ALL ON *.* TO rk@'127.0.0.1';"
                 "CREATE DATABASE IF NOT EXISTS rk;"
                 "CREATE TABLE IF NOT EXISTS rk.kv (k VARCHAR(32) PRIMARY KEY,"
                 " v VARCHAR(128)) ENGINE=InnoDB;")

    def __init__(self):
        import pymysql
        self.pymysql = pymysql
        res = subprocess.run(["mariadb", "-e", self.setup_sql],
                             capture_output=True, text=True)
        if res.returncode:
            raise IOError("mariadb setup: " + res.stderr.strip())

    def connect(self):
        return self.pymysql.connect(host="127.0.0.1", user="rk", password="rk",
                                    database="rk", autocommit=True,
                                    connect_timeout=60)

    def hello(self, c):
        with c.cursor() as cur:
            cur.execute("SELECT 1")
            return cur.fetchone() == (1,)

    def set(self, c, key, val):
        with c.cursor() as cur:
            return cur.execute("REPLACE INTO kv VALUES (%s, %s)", (key, val)) >= 1

    def get(self, c, key):
        with c.cursor() as cur:
            cur.execute("SELECT v FROM kv WHERE k = %s", (key,))
            row = cur.fetchone()
            return row[0].encode() if row else None

    def load(self):
        cmd = ["mariadb-slap", "-h", "127.0.0.1", "-u", "rk", "-prk",
               "--concurrency=20", "--iterations=1", "--auto-generate-sql",
               "--number-of-queries=2000"]
        return subprocess.run(cmd, capture_output=True, text=True)


def key(i):
    return b"rk:%d" % i


def val(i):
    return b"value-%d-%s" % (i, b"x" * (i % 64))


def check_all(srv, conns):
    """Every connection asks for its own key; the number answered right."""
    good = 0
    for i, c in enumerate(conns):
        try:
            good += srv.get(c, key(i)) == val(i)
        except Exception as e:
            note("connection %d: %s" % (i, e))
    return good


def timed_get(srv, c, i):
    t = time.perf_counter()
    ok = srv.get(c, key(i)) == val(i)
    return (time.perf_counter() - t) * 1000.0, ok


def restart(srv):
    """Restart the server's unit (start the JVM's) and wait until it
    answers, for up to 10 minutes (the JVM compiles RkPool.java first).
    Its threads are then new: an earlier step's drop_caches (global) has
    not reclaimed them already, and its "before" figures are its own."""
    start = time.monotonic()
    subprocess.run(["systemctl", "restart", srv.unit], check=True)
    while True:
        try:
            srv.connect().close()
            break
        except Exception:	# OSError, or pymysql's own
            if time.monotonic() > start + 600:
                raise
            time.sleep(1)
    note("%s answered %.0f s after its restart" % (srv.unit, time.monotonic() - start))


def run(name, srv):
    restart(srv)
    pid = main_pid(srv.unit)
    tap(pid is not None, "%s active (%s)" % (name, srv.unit))
    if pid is None:
        return None
    conns, good = [], 0
    try:
        for i in range(CONNS):
            c = srv.connect()
            conns.append(c)
            good += srv.hello(c)
    except Exception as e:
        note("connection %d: %r" % (len(conns), e))
    tap(good == CONNS, "%d idle connections opened and answered" % CONNS,
        "%d answered" % good)
    stored = sum(srv.set(c, key(i), val(i)) for i, c in enumerate(conns))
    tap(stored == len(conns), "one key stored per connection",
        "%d of %d" % (stored, len(conns)))
    threads = nthreads(pid)
    note("%s: pid %d, %d threads" % (name, pid, threads))

    time.sleep(2)
    ks0, cg0 = meminfo_kb("KernelStack"), memcg_stack_kb(srv.unit)
    before = []
    for r in range(5):
        time.sleep(0.5)
        ms, ok = timed_get(srv, conns[r], r)
        before.append(ms)
    time.sleep(2)	# the probed threads past the 1.5 s age bar too
    reclaim()
    # memory.stat is flushed every 2 s (or after enough updates): wait for it.
    time.sleep(3)
    ks1, cg1 = meminfo_kb("KernelStack"), memcg_stack_kb(srv.unit)
    note("KernelStack %d -> %d kB, memcg kernel_stack %s -> %s KiB" %
         (ks0, ks1, cg0, cg1))
    tap(cg0 is not None, "the unit has a memory cgroup with kernel_stack")
    tap(cg0 is not None and cg1 < cg0,
        "forced reclaim takes stack pages from the server's memcg",
        "kernel_stack %s -> %s KiB" % (cg0, cg1))
    tap(census(name), "census of every thread")
    after, late_ok = [], 0
    for r in range(5):
        time.sleep(1.2)
        reclaim()
        ms, ok = timed_get(srv, conns[10 + r], 10 + r)
        after.append(ms)
        late_ok += ok
    tap(late_ok == 5, "first request after reclaim answered right (5 rounds)")
    good = check_all(srv, conns)
    tap(good == len(conns), "every connection's key read back after reclaim",
        "%d of %d" % (good, len(conns)))
    load = srv.load()
    for line in load.stdout.splitlines()[-4:]:
        note(line.strip())
    tap(load.returncode == 0, "load from %s" % load.args[0],
        "exit status %d: %s" % (load.returncode, load.stderr.strip()[-200:]))
    time.sleep(2)
    reclaim()
    good2 = check_all(srv, conns)
    tap(good2 == len(conns), "every key read back after load and reclaim",
        "%d of %d" % (good2, len(conns)))
    for c in conns:
        c.close()
    row = [name, threads, len(conns), ks0, ks1, cg0, cg1,
           "%.2f" % statistics.median(before), "%.2f" % statistics.median(after),
           "%d/%d" % (good + good2, 2 * len(conns))]
    print("@@RK-SERVER " + "|".join(str(x) for x in row), flush=True)
    return row


def main():
    servers = {"memcached": Memcached, "redis": Redis, "mariadb": Mariadb, "jvm": Jvm}
    if len(sys.argv) != 2 or sys.argv[1] not in servers:
        sys.exit("usage: servers.py %s" % "|".join(servers))
    name = sys.argv[1]
    try:
        run(name, servers[name]())
    except Exception as e:  # a crash still ends the TAP with its plan
        tap(False, "%s driver" % name, repr(e))
    finish()


if __name__ == "__main__":
    main()
