// SPDX-License-Identifier: GPL-2.0
/*
 * make realworld's JVM server (rk-jvm.service runs it from source:
 * "java RkPool.java PORT POOL"). A pool of POOL worker threads, started at
 * once and parked in LinkedBlockingQueue.take() (LockSupport.park: a futex
 * wait) until there is work, and one selector thread (epoll) reading every
 * loopback connection. Each request is handed to the pool: a parked worker
 * wakes, answers, parks again. It speaks the subset of the Redis protocol
 * (RESP arrays of bulk strings) that redis-benchmark -t set,get and
 * servers.py use: PING, SET key value, GET key; anything else gets -ERR.
 * One request at a time per connection (no pipelining: replies could pass
 * each other in the pool).
 */
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public class RkPool {
	static final Map<String, String> store = new ConcurrentHashMap<>();

	/* What the connection has sent and not yet parsed. */
	static final class Conn {
		final SocketChannel ch;
		ByteBuffer in = ByteBuffer.allocate(4096);

		Conn(SocketChannel ch) { this.ch = ch; }
	}

	static String answer(List<String> cmd) {
		String op = cmd.get(0).toUpperCase();
		if (op.equals("PING") && cmd.size() == 1)
			return "+PONG";
		if (op.equals("SET") && cmd.size() == 3) {
			store.put(cmd.get(1), cmd.get(2));
			return "+OK";
		}
		if (op.equals("GET") && cmd.size() == 2) {
			String v = store.get(cmd.get(1));
			return v == null ? "$-1" : "$" + v.length() + "\r\n" + v;
		}
		return "-ERR unknown command";
	}

	static void reply(Conn c, String text) {
		ByteBuffer b = ByteBuffer.wrap((text + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
		try {
			synchronized (c) {
				while (b.hasRemaining())
					c.ch.write(b);
			}
		} catch (IOException e) {
			close(c);
		}
	}

	static void close(Conn c) {
		try {
			c.ch.close();
		} catch (IOException e) {
			/* gone either way */
		}
	}

	/* The line at b's position up to CRLF (position moves past it), or null. */
	static String line(ByteBuffer b) {
		for (int i = b.position(); i + 1 < b.limit(); i++) {
			if (b.get(i) == '\r' && b.get(i + 1) == '\n') {
				byte[] s = new byte[i - b.position()];
				b.get(s);
				b.position(i + 2);
				return new String(s, StandardCharsets.ISO_8859_1);
			}
		}
		return null;
	}

	/* One whole "*N" array of "$len" strings from b (flipped), or null if
	 * it has not all come yet (b's position is then where it was). */
	static List<String> command(ByteBuffer b) {
		int start = b.position();
		String head = line(b);
		if (head != null && head.startsWith("*")) {
			int n = Integer.parseInt(head.substring(1));
			List<String> cmd = new ArrayList<>();
			while (cmd.size() < n) {
				String len = line(b);
				if (len == null || !len.startsWith("$"))
					break;
				int l = Integer.parseInt(len.substring(1));
				if (b.remaining() < l + 2)
					break;
				byte[] s = new byte[l];
				b.get(s);
				b.position(b.position() + 2);
				cmd.add(new String(s, StandardCharsets.ISO_8859_1));
			}
			if (cmd.size() == n && n > 0)
				return cmd;
		}
		b.position(start);
		return null;
	}

	static void read(SelectionKey k, ExecutorService pool) throws IOException {
		Conn c = (Conn) k.attachment();
		if (!c.in.hasRemaining()) {
			ByteBuffer bigger = ByteBuffer.allocate(c.in.capacity() * 2);
			c.in.flip();
			bigger.put(c.in);
			c.in = bigger;
		}
		int got;
		try {
			got = c.ch.read(c.in);
		} catch (IOException e) {
			got = -1;
		}
		if (got < 0) {
			k.cancel();
			close(c);
			return;
		}
		c.in.flip();
		for (List<String> cmd; (cmd = command(c.in)) != null;) {
			List<String> req = cmd;
			pool.execute(() -> reply(c, answer(req)));
		}
		c.in.compact();
	}

	public static void main(String[] args) throws IOException {
		int port = Integer.parseInt(args[0]), n = Integer.parseInt(args[1]);
		ThreadPoolExecutor pool = new ThreadPoolExecutor(n, n, 0, TimeUnit.SECONDS,
								 new LinkedBlockingQueue<>());
		pool.prestartAllCoreThreads();
		Selector sel = Selector.open();
		ServerSocketChannel srv = ServerSocketChannel.open();
		srv.bind(new InetSocketAddress("127.0.0.1", port), 4096);
		srv.configureBlocking(false);
		srv.register(sel, SelectionKey.OP_ACCEPT);
		System.out.println("RkPool: " + n + " pool threads, 127.0.0.1:" + port);
		for (;;) {
			sel.select();
			for (SelectionKey k : sel.selectedKeys()) {
				if (k.isAcceptable()) {
					SocketChannel ch = srv.accept();
					if (ch == null)
						continue;
					ch.configureBlocking(false);
					ch.register(sel, SelectionKey.OP_READ, new Conn(ch));
				} else if (k.isReadable()) {
					read(k, pool);
				}
			}
			sel.selectedKeys().clear();
		}
	}
}
