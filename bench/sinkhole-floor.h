/* bench/sinkhole's floor: the kernel's own TCP/IP behind a tap device in
 * the benchmark's own network namespace, answering from the sinkhole's
 * addresses and MAC, with plain listeners in threads of their own (TCP:
 * accept, read the request head, write the reply, shut down, read to the
 * end, close; DNS: one canned A answer per query).  What the sinkhole adds
 * to the same exchange is then its relay, capture, redirect, detection
 * and records.  Also the addresses and bytes both sides of the benchmark
 * share. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The guest's side and the network's, as the sinkhole has them
 * (sinkhole/; the guest's MAC is AIRLOCK_NET_GUEST_MAC). */
#define BENCH_NET_GUEST_ADDR "10.0.2.15"
#define BENCH_NET_GATEWAY_ADDR "10.0.2.2"
#define BENCH_NET_DNS_ADDR "10.0.2.3"
extern const guint8 bench_net_gateway_mac[6];

/* The server: example.com.'s address in the sinkhole (docs/sinkhole.md)
 * and its fixture's port; the floor's tap holds the same address. */
#define BENCH_NET_SERVER_NAME "example.com"
#define BENCH_NET_SERVER_ADDR "198.18.243.18"
#define BENCH_NET_SERVER_PORT 80

/* What the client asks, and what the server (the sinkhole's --serve
 * fixture, the floor's listener) answers. */
#define BENCH_NET_HTTP_REQUEST \
  "GET /bench HTTP/1.1\r\nHost: " BENCH_NET_SERVER_NAME "\r\nUser-Agent: airlock-bench\r\n\r\n"
#define BENCH_NET_HTTP_REPLY \
  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"

/* Moves the calling thread into a network namespace of its own: as root a
 * new one; otherwise one inside a new user namespace that maps us to its
 * root (as the sinkhole does), which needs unprivileged user namespaces.
 * Call it before any other thread exists: a namespace is a thread's, and
 * the floor's threads must be born in it.  FALSE with @error when the
 * kernel refuses. */
gboolean bench_net_floor_enter_namespace (GError **error);

/* In that namespace: makes the tap, gives it the addresses above, and
 * starts the listeners, which add 1 to the eventfd @done_fd each time
 * they have finished an exchange (a connection closed, a query answered).
 * Returns the tap's descriptor (non-blocking: one frame per read and per
 * write), or -1 with @error.  The listeners live as long as the process;
 * they exit it (status 1, the reason on stderr) when a system call fails. */
int bench_net_floor_start (int done_fd, GError **error);

G_END_DECLS
