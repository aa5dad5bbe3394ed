/* Unit tests for the decoders of the supervisor's raw records
 * (lib/evidence/sockaddr.c, sockaddr-socket.c, dns.c).
 *
 * Fixtures are byte arrays laid out the way a process passes them to the
 * kernel (little-endian sa_family, network-order ports), built by hand
 * rather than with the host's struct definitions, so the decoder is
 * checked against the ABI and not against itself. */
#include "config.h"

#include "evidence/dns.h"
#include "evidence/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* ---- sockaddr fixtures ---- */

typedef struct {
  guint8 bytes[256];
  gsize len;
} Fixture;

static void
put_le16 (guint8 *p, guint16 v)
{
  p[0] = (guint8) v;
  p[1] = (guint8) (v >> 8);
}

static void
put_le32 (guint8 *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (guint8) (v >> (8 * i));
}

static void
put_be16 (guint8 *p, guint16 v)
{
  p[0] = (guint8) (v >> 8);
  p[1] = (guint8) v;
}

static Fixture
sin_fixture (guint16 family, guint16 port, const char *address)
{
  Fixture f = { { 0 }, 16 };

  put_le16 (f.bytes, family);
  put_be16 (f.bytes + 2, port);
  g_assert_cmpint (inet_pton (AF_INET, address, f.bytes + 4), ==, 1);
  return f;
}

static Fixture
sin6_fixture (gsize len, guint16 port, const char *address, guint32 flowinfo, guint32 scope_id)
{
  Fixture f = { { 0 }, len };

  put_le16 (f.bytes, AF_INET6);
  put_be16 (f.bytes + 2, port);
  f.bytes[4] = (guint8) (flowinfo >> 24);
  f.bytes[5] = (guint8) (flowinfo >> 16);
  f.bytes[6] = (guint8) (flowinfo >> 8);
  f.bytes[7] = (guint8) flowinfo;
  g_assert_cmpint (inet_pton (AF_INET6, address, f.bytes + 8), ==, 1);
  /* Written even for a 24-byte address: the decoder must not read it. */
  put_le32 (f.bytes + 24, scope_id);
  return f;
}

/* sun_family then @path_len bytes of @path. */
static Fixture
sun_fixture (const char *path, gsize path_len)
{
  Fixture f = { { 0 }, 2 + path_len };

  g_assert_cmpuint (path_len, <=, sizeof f.bytes - 2);
  put_le16 (f.bytes, AF_UNIX);
  memcpy (f.bytes + 2, path, path_len);
  return f;
}

static AirlockSockaddr
decode_ok (const Fixture *f)
{
  AirlockSockaddr sa;
  g_autoptr (GError) error = NULL;

  g_assert_true (airlock_sockaddr_decode (f->bytes, f->len, &sa, &error));
  g_assert_no_error (error);
  return sa;
}

static AirlockSockaddr
decode_socket_ok (int family, int type, int protocol, AirlockSockaddrCall call, const Fixture *f)
{
  AirlockSockaddr sa;
  g_autoptr (GError) error = NULL;

  g_assert_true (airlock_sockaddr_decode_for_socket (family, type, protocol, call, f->bytes,
                                                     f->len, &sa, &error));
  g_assert_no_error (error);
  return sa;
}

static void
assert_string (const AirlockSockaddr *sa, const char *expected)
{
  g_autofree char *text = airlock_sockaddr_to_string (sa);

  g_assert_cmpstr (text, ==, expected);
}

static void
assert_key (int family, int type, int protocol, const AirlockSockaddr *sa, const char *expected)
{
  g_autofree char *key = airlock_attempt_key (family, type, protocol, sa);

  g_assert_cmpstr (key, ==, expected);
}

/* The decode fails with @code, says @errno_name, and leaves ret alone. */
static void
assert_refused_with (gboolean (*decode) (const Fixture *, AirlockSockaddr *, GError **),
                     const Fixture *f, AirlockSockaddrError code, const char *errno_name)
{
  AirlockSockaddr sa, before;
  g_autoptr (GError) error = NULL;

  memset (&sa, 0xa5, sizeof sa);
  memcpy (&before, &sa, sizeof before);
  g_assert_false (decode (f, &sa, &error));
  g_assert_error (error, AIRLOCK_SOCKADDR_ERROR, (gint) code);
  g_assert_nonnull (strstr (error->message, errno_name));
  g_assert_cmpmem (&sa, sizeof sa, &before, sizeof before);
}

static gboolean
generic_decode (const Fixture *f, AirlockSockaddr *sa, GError **error)
{
  return airlock_sockaddr_decode (f->bytes, f->len, sa, error);
}

static void
assert_refused (const Fixture *f, AirlockSockaddrError code)
{
  assert_refused_with (generic_decode, f, code, "EINVAL");
}

/* The call of the next socket-aware refusal check. */
static struct {
  int family, type, protocol;
  AirlockSockaddrCall call;
} refusal_socket;

static gboolean
socket_decode (const Fixture *f, AirlockSockaddr *sa, GError **error)
{
  return airlock_sockaddr_decode_for_socket (refusal_socket.family, refusal_socket.type,
                                             refusal_socket.protocol, refusal_socket.call,
                                             f->bytes, f->len, sa, error);
}

static void
assert_socket_refused (int family, int type, int protocol, AirlockSockaddrCall call,
                       const Fixture *f, AirlockSockaddrError code, const char *errno_name)
{
  refusal_socket.family = family;
  refusal_socket.type = type;
  refusal_socket.protocol = protocol;
  refusal_socket.call = call;
  assert_refused_with (socket_decode, f, code, errno_name);
}

/* ---- sockaddr: family-driven ---- */

static void
test_sockaddr_inet (void)
{
  Fixture f = sin_fixture (AF_INET, 80, "192.0.2.1");
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_ADDRESS);
  g_assert_cmpuint (sa.family, ==, AF_INET);
  g_assert_cmpuint (sa.family_field, ==, AF_INET);
  g_assert_cmpuint (sa.len, ==, 16);
  g_assert_true (sa.inet.is_v4);
  g_assert_cmpuint (sa.inet.port, ==, 80);
  g_assert_cmpmem (sa.inet.v4, 4, "\xc0\x00\x02\x01", 4);
  g_assert_cmpmem (sa.inet.addr, 4, "\xc0\x00\x02\x01", 4);
  g_assert_false (sa.inet.v4_mapped);
  assert_string (&sa, "192.0.2.1:80");
}

static void
test_sockaddr_inet_longer_is_accepted (void)
{
  /* The kernel ignores bytes past sockaddr_in: 20 bytes decode the same. */
  Fixture f = sin_fixture (AF_INET, 443, "198.51.100.7");
  AirlockSockaddr sa;

  f.len = 20;
  memset (f.bytes + 16, 0xee, 4);
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.len, ==, 20);
  assert_string (&sa, "198.51.100.7:443");
}

static void
test_sockaddr_inet_too_short (void)
{
  Fixture f = sin_fixture (AF_INET, 80, "192.0.2.1");

  f.len = 15;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
}

static void
test_sockaddr_inet6_rfc2133_has_no_scope (void)
{
  /* 24 bytes: sin6_scope_id is not part of the address, even though the
   * buffer behind it holds 7. */
  Fixture f = sin6_fixture (24, 443, "fe80::1", 0x12345, 7);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_cmpuint (sa.family, ==, AF_INET6);
  g_assert_false (sa.inet.is_v4);
  g_assert_false (sa.inet.has_scope_id);
  g_assert_cmpuint (sa.inet.scope_id, ==, 0);
  g_assert_cmpuint (sa.inet.flowinfo, ==, 0x12345);
  g_assert_cmpuint (sa.inet.port, ==, 443);
  assert_string (&sa, "[fe80::1]:443");
}

static void
test_sockaddr_inet6_scope_id (void)
{
  Fixture f = sin6_fixture (28, 443, "2001:db8::1", 0, 2);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_true (sa.inet.has_scope_id);
  g_assert_cmpuint (sa.inet.scope_id, ==, 2);
  assert_string (&sa, "[2001:db8::1%2]:443");
}

static void
test_sockaddr_inet6_too_short (void)
{
  Fixture f = sin6_fixture (23, 443, "2001:db8::1", 0, 0);

  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
}

static void
test_sockaddr_inet6_v4_mapped (void)
{
  Fixture f = sin6_fixture (28, 53, "::ffff:192.0.2.1", 0, 0);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_true (sa.inet.v4_mapped);
  g_assert_false (sa.inet.is_v4);
  g_assert_cmpmem (sa.inet.v4, 4, "\xc0\x00\x02\x01", 4);
  assert_string (&sa, "[::ffff:192.0.2.1]:53 (v4-mapped 192.0.2.1)");
}

static void
test_sockaddr_unix_path (void)
{
  Fixture f = sun_fixture ("/run/x\0", 7);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_cmpuint (sa.family, ==, AF_UNIX);
  g_assert_false (sa.un.abstract);
  g_assert_false (sa.un.unnamed);
  g_assert_false (sa.un.unterminated);
  g_assert_cmpmem (sa.un.path, sa.un.path_len, "/run/x", 6);
  assert_string (&sa, "unix:/run/x");
}

static void
test_sockaddr_unix_path_ends_at_nul (void)
{
  /* unix_mkname_bsd(): the kernel stops at the first NUL. */
  Fixture f = sun_fixture ("/run/x\0junk", 11);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_cmpmem (sa.un.path, sa.un.path_len, "/run/x", 6);
  assert_string (&sa, "unix:/run/x");
}

static void
test_sockaddr_unix_path_max_unterminated (void)
{
  char path[108];
  Fixture f;
  AirlockSockaddr sa;
  g_autofree char *expected = NULL;

  memset (path, 'p', sizeof path);
  path[0] = '/';
  f = sun_fixture (path, sizeof path);
  g_assert_cmpuint (f.len, ==, 110);
  sa = decode_ok (&f);
  g_assert_true (sa.un.unterminated);
  g_assert_cmpmem (sa.un.path, sa.un.path_len, path, sizeof path);
  expected = g_strdup_printf ("unix:%.*s", (int) sizeof path, path);
  assert_string (&sa, expected);

  /* one more byte is more than struct sockaddr_un */
  f.len = 111;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_LONG);
}

static void
test_sockaddr_unix_abstract_embedded_nul (void)
{
  Fixture f = sun_fixture ("\0ab\0c", 5);
  Fixture g = sun_fixture ("\0ab\0c\0", 6);
  AirlockSockaddr sa = decode_ok (&f);
  AirlockSockaddr sb = decode_ok (&g);
  g_autofree char *key_a = NULL;
  g_autofree char *key_b = NULL;

  g_assert_true (sa.un.abstract);
  g_assert_cmpmem (sa.un.path, sa.un.path_len, "ab\0c", 4);
  assert_string (&sa, "unix:@ab\\x00c");
  /* A trailing NUL is part of an abstract name: another socket. */
  assert_string (&sb, "unix:@ab\\x00c\\x00");
  key_a = airlock_attempt_key (AF_UNIX, SOCK_STREAM, 0, &sa);
  key_b = airlock_attempt_key (AF_UNIX, SOCK_STREAM, 0, &sb);
  g_assert_cmpstr (key_a, !=, key_b);
}

static void
test_sockaddr_unix_unnamed (void)
{
  Fixture f = sun_fixture ("", 0);
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_true (sa.un.unnamed);
  g_assert_cmpuint (sa.un.path_len, ==, 0);
  assert_string (&sa, "unix:(unnamed)");
}

static void
test_sockaddr_unix_names_cannot_be_confused (void)
{
  /* A filesystem name "@x" is not the abstract name "x", and "(unnamed)"
   * is not the unnamed address. */
  Fixture path_at = sun_fixture ("@x", 2);
  Fixture abstract = sun_fixture ("\0x", 2);
  Fixture paren = sun_fixture ("(unnamed)", 9);
  AirlockSockaddr a = decode_ok (&path_at);
  AirlockSockaddr b = decode_ok (&abstract);
  AirlockSockaddr c = decode_ok (&paren);

  assert_string (&a, "unix:\\x40x");
  assert_string (&b, "unix:@x");
  assert_string (&c, "unix:\\x28unnamed)");
}

static void
test_sockaddr_unix_hostile_name_is_escaped (void)
{
  Fixture f = sun_fixture ("/tmp/\n\x1b[2J\\\xff", 12);
  AirlockSockaddr sa = decode_ok (&f);
  g_autofree char *text = airlock_sockaddr_to_string (&sa);

  g_assert_cmpstr (text, ==, "unix:/tmp/\\n\\x1b[2J\\\\\\xff");
  g_assert_true (g_utf8_validate (text, -1, NULL));
}

static void
test_sockaddr_unspec_disconnects (void)
{
  Fixture f = { { 0 }, 16 };
  AirlockSockaddr sa = decode_ok (&f);

  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_DISCONNECT);
  g_assert_cmpuint (sa.family, ==, AF_UNSPEC);
  assert_string (&sa, "unspec (disconnect)");
}

static void
test_sockaddr_length_bounds (void)
{
  Fixture f = sin_fixture (AF_INET, 80, "192.0.2.1");

  f.len = 129;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_LONG);
  f.len = 128;
  decode_ok (&f);
  f.len = 1;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
  f.len = 0;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
}

static void
test_sockaddr_unknown_family_keeps_bytes (void)
{
  Fixture f = { { 0 }, 6 };
  AirlockSockaddr sa;

  put_le16 (f.bytes, 42);
  memcpy (f.bytes + 2, "\x01\x02\xfe\xff", 4);
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.family, ==, 42);
  g_assert_cmpmem (sa.bytes, sa.len, f.bytes, 6);
  assert_string (&sa, "family-42:0102feff");
}

static void
test_sockaddr_netlink (void)
{
  Fixture f = { { 0 }, 12 };
  AirlockSockaddr sa;

  put_le16 (f.bytes, AF_NETLINK);
  put_le32 (f.bytes + 4, 1234);
  put_le32 (f.bytes + 8, 0x11);
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.nl.pid, ==, 1234);
  g_assert_cmpuint (sa.nl.groups, ==, 0x11);
  assert_string (&sa, "netlink:pid=1234,groups=0x11");

  f.len = 11;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
}

static void
test_sockaddr_packet (void)
{
  Fixture f = { { 0 }, 20 };
  AirlockSockaddr sa;

  put_le16 (f.bytes, AF_PACKET);
  put_be16 (f.bytes + 2, 0x0800);
  put_le32 (f.bytes + 4, 2);
  put_le16 (f.bytes + 8, 1);
  f.bytes[10] = 0;
  f.bytes[11] = 6;
  memcpy (f.bytes + 12, "\x52\x54\x00\x12\x34\x56", 6);
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.ll.protocol, ==, 0x0800);
  g_assert_cmpint (sa.ll.ifindex, ==, 2);
  g_assert_cmpuint (sa.ll.hatype, ==, 1);
  g_assert_cmpuint (sa.ll.halen, ==, 6);
  assert_string (&sa, "packet:ifindex=2,protocol=0x0800,hatype=1,pkttype=0,"
                      "addr=52:54:00:12:34:56");

  /* packet_snd(): sll_halen of 9 needs 21 bytes. */
  f.bytes[11] = 9;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
  f.len = 21;
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.ll.halen, ==, 9);
}

static void
test_sockaddr_vsock (void)
{
  Fixture f = { { 0 }, 16 };
  AirlockSockaddr sa;

  put_le16 (f.bytes, AF_VSOCK);
  put_le32 (f.bytes + 4, 1024);
  put_le32 (f.bytes + 8, 2);
  sa = decode_ok (&f);
  g_assert_cmpuint (sa.vm.cid, ==, 2);
  g_assert_cmpuint (sa.vm.port, ==, 1024);
  assert_string (&sa, "vsock:2:1024");

  f.bytes[12] = 0x01;  /* VMADDR_FLAG_TO_HOST */
  sa = decode_ok (&f);
  assert_string (&sa, "vsock:2:1024,flags=0x1");
  f.bytes[12] = 0x02;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_INVALID);
  f.bytes[12] = 0;
  f.len = 15;
  assert_refused (&f, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT);
}

/* ---- sockaddr: what each socket accepts ---- */

static void
test_socket_udp_sendto_unspec_is_inet (void)
{
  /* udp_sendmsg() sends to an AF_UNSPEC sockaddr_in: that is egress to
   * 192.0.2.1:53, not a disconnect. */
  Fixture f = sin_fixture (AF_UNSPEC, 53, "192.0.2.1");
  AirlockSockaddr sa = decode_socket_ok (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO,
                                         &f);

  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_ADDRESS);
  g_assert_cmpuint (sa.family, ==, AF_INET);
  g_assert_cmpuint (sa.family_field, ==, AF_UNSPEC);
  assert_string (&sa, "192.0.2.1:53");

  /* raw_sendmsg() too; connect() disconnects; ping refuses. */
  sa = decode_socket_ok (AF_INET, SOCK_RAW, IPPROTO_ICMP, AIRLOCK_SOCKADDR_CALL_SENDMSG, &f);
  assert_string (&sa, "192.0.2.1:53");
  sa = decode_socket_ok (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_DISCONNECT);
  assert_socket_refused (AF_INET, SOCK_DGRAM, IPPROTO_ICMP, AIRLOCK_SOCKADDR_CALL_SENDTO, &f,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EAFNOSUPPORT");
}

static void
test_socket_inet4_refuses_inet6 (void)
{
  Fixture f = sin6_fixture (28, 53, "2001:db8::1", 0, 0);

  assert_socket_refused (AF_INET, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &f,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EAFNOSUPPORT");
  assert_socket_refused (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &f,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EAFNOSUPPORT");
}

static void
test_socket_inet6_dual_stack (void)
{
  Fixture v4 = sin_fixture (AF_INET, 53, "192.0.2.1");
  Fixture v4_long = v4;
  AirlockSockaddr sa;

  /* __ip6_datagram_connect() and udpv6_sendmsg() take a sockaddr_in. */
  sa = decode_socket_ok (AF_INET6, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &v4);
  g_assert_true (sa.inet.is_v4);
  assert_string (&sa, "192.0.2.1:53");
  sa = decode_socket_ok (AF_INET6, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &v4);
  assert_string (&sa, "192.0.2.1:53");

  /* tcp_v6_connect() does not: EINVAL under 24 bytes, EAFNOSUPPORT at 28. */
  assert_socket_refused (AF_INET6, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &v4,
                         AIRLOCK_SOCKADDR_ERROR_TOO_SHORT, "EINVAL");
  v4_long.len = 28;
  assert_socket_refused (AF_INET6, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &v4_long,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EAFNOSUPPORT");
}

static void
test_socket_udp6_sendto_unspec_is_no_address (void)
{
  Fixture f = sin6_fixture (28, 53, "2001:db8::1", 0, 0);
  AirlockSockaddr sa;

  put_le16 (f.bytes, AF_UNSPEC);
  sa = decode_socket_ok (AF_INET6, SOCK_DGRAM, IPPROTO_UDP, AIRLOCK_SOCKADDR_CALL_SENDTO, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_NO_ADDRESS);
  assert_string (&sa, "(connected peer)");

  /* rawv6_sendmsg() reads the same bytes as an IPv6 destination. */
  sa = decode_socket_ok (AF_INET6, SOCK_RAW, IPPROTO_UDP, AIRLOCK_SOCKADDR_CALL_SENDTO, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_ADDRESS);
  g_assert_cmpuint (sa.family, ==, AF_INET6);
  g_assert_cmpuint (sa.family_field, ==, AF_UNSPEC);
  assert_string (&sa, "[2001:db8::1]:53");
}

static void
test_socket_ping6_needs_whole_sockaddr_in6 (void)
{
  Fixture f = sin6_fixture (24, 0, "2001:db8::1", 0, 0);

  assert_socket_refused (AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, AIRLOCK_SOCKADDR_CALL_SENDTO, &f,
                         AIRLOCK_SOCKADDR_ERROR_TOO_SHORT, "EINVAL");
  f.len = 28;
  decode_socket_ok (AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, AIRLOCK_SOCKADDR_CALL_SENDTO, &f);
}

static void
test_socket_sendmsg_clamps_sendto_refuses (void)
{
  Fixture f = sin_fixture (AF_INET, 53, "192.0.2.1");
  AirlockSockaddr sa;

  /* __copy_msghdr() clamps msg_namelen to 128; move_addr_to_kernel()
   * refuses more for sendto. */
  f.len = 200;
  sa = decode_socket_ok (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDMSG, &f);
  g_assert_cmpuint (sa.len, ==, 128);
  assert_string (&sa, "192.0.2.1:53");
  assert_socket_refused (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &f,
                         AIRLOCK_SOCKADDR_ERROR_TOO_LONG, "EINVAL");
  /* … but a msg_namelen that is negative as an int is EINVAL; only the
   * first 128 bytes are ever read */
  f.len = 0x80000000u;
  assert_socket_refused (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDMSG, &f,
                         AIRLOCK_SOCKADDR_ERROR_TOO_LONG, "EINVAL");
  f.len = 0x7fffffffu;
  sa = decode_socket_ok (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDMSG, &f);
  g_assert_cmpuint (sa.len, ==, 128);

  /* a zero msg_namelen is no address; a zero sendto length on UDP is
   * EINVAL */
  f.len = 0;
  sa = decode_socket_ok (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDMSG, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_NO_ADDRESS);
  assert_socket_refused (AF_INET, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &f,
                         AIRLOCK_SOCKADDR_ERROR_TOO_SHORT, "EINVAL");
}

static void
test_socket_tcp_send_ignores_address (void)
{
  Fixture f = sin_fixture (AF_INET, 443, "192.0.2.1");
  AirlockSockaddr sa;

  sa = decode_socket_ok (AF_INET, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_NO_ADDRESS);
  sa = decode_socket_ok (AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0,
                         AIRLOCK_SOCKADDR_CALL_CONNECT, &f);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_ADDRESS);
  assert_string (&sa, "192.0.2.1:443");
}

static void
test_socket_inet_bind (void)
{
  Fixture any = sin_fixture (AF_UNSPEC, 8080, "0.0.0.0");
  Fixture some = sin_fixture (AF_UNSPEC, 8080, "192.0.2.1");
  AirlockSockaddr sa;

  /* __inet_bind(): AF_UNSPEC only with INADDR_ANY; raw_bind() checks no
   * family at all. */
  sa = decode_socket_ok (AF_INET, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_BIND, &any);
  assert_string (&sa, "0.0.0.0:8080");
  assert_socket_refused (AF_INET, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_BIND, &some,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EAFNOSUPPORT");
  sa = decode_socket_ok (AF_INET, SOCK_RAW, IPPROTO_RAW, AIRLOCK_SOCKADDR_CALL_BIND, &some);
  assert_string (&sa, "192.0.2.1:8080");
}

static void
test_socket_unix (void)
{
  Fixture unnamed = sun_fixture ("", 0);
  Fixture name = sun_fixture ("/run/x", 6);
  Fixture unspec = { { 0 }, 2 };
  AirlockSockaddr sa;

  /* unix_stream_connect() validates: the lone family is EINVAL, and so is
   * AF_UNSPEC (only datagram sockets disconnect with it). */
  assert_socket_refused (AF_UNIX, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &unnamed,
                         AIRLOCK_SOCKADDR_ERROR_TOO_SHORT, "EINVAL");
  assert_socket_refused (AF_UNIX, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &unspec,
                         AIRLOCK_SOCKADDR_ERROR_TOO_SHORT, "EINVAL");
  sa = decode_socket_ok (AF_UNIX, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &unspec);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_DISCONNECT);
  /* unix_bind() autobinds */
  sa = decode_socket_ok (AF_UNIX, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_BIND, &unnamed);
  g_assert_true (sa.un.unnamed);
  /* a stream send takes no address; a datagram one does */
  assert_socket_refused (AF_UNIX, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &name,
                         AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED, "EOPNOTSUPP");
  sa = decode_socket_ok (AF_UNIX, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &name);
  assert_string (&sa, "unix:/run/x");
  sa = decode_socket_ok (AF_UNIX, SOCK_SEQPACKET, 0, AIRLOCK_SOCKADDR_CALL_SENDMSG, &name);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_NO_ADDRESS);
}

static void
test_socket_packet_reads_any_family (void)
{
  /* packet_snd() checks no family: 20 bytes of AF_INET are a sockaddr_ll. */
  Fixture f = sin_fixture (AF_INET, 0x0800, "0.0.0.2");
  AirlockSockaddr sa;

  f.len = 20;
  sa = decode_socket_ok (AF_PACKET, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &f);
  g_assert_cmpuint (sa.family, ==, AF_PACKET);
  g_assert_cmpuint (sa.family_field, ==, AF_INET);
  g_assert_cmpuint (sa.ll.protocol, ==, 0x0800);
  assert_socket_refused (AF_PACKET, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &f,
                         AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED, "EOPNOTSUPP");
  assert_socket_refused (AF_PACKET, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_BIND, &f,
                         AIRLOCK_SOCKADDR_ERROR_FAMILY, "EINVAL");
}

static void
test_socket_netlink_and_vsock (void)
{
  Fixture unspec = { { 0 }, 2 };
  Fixture vm_unspec = { { 0 }, 16 };
  Fixture vm = { { 0 }, 16 };
  AirlockSockaddr sa;

  sa = decode_socket_ok (AF_NETLINK, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &unspec);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_DISCONNECT);
  unspec.len = 0;
  sa = decode_socket_ok (AF_NETLINK, SOCK_RAW, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &unspec);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_NO_ADDRESS);

  sa = decode_socket_ok (AF_VSOCK, SOCK_DGRAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &vm_unspec);
  g_assert_cmpint (sa.effect, ==, AIRLOCK_SOCKADDR_DISCONNECT);
  put_le16 (vm.bytes, AF_VSOCK);
  put_le32 (vm.bytes + 8, 2);
  assert_socket_refused (AF_VSOCK, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_SENDTO, &vm,
                         AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED, "EOPNOTSUPP");
  sa = decode_socket_ok (AF_VSOCK, SOCK_STREAM, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, &vm);
  assert_string (&sa, "vsock:2:0");
}

/* ---- attempt keys ---- */

static void
test_key_tcp_and_udp_differ (void)
{
  Fixture f = sin_fixture (AF_INET, 9, "192.0.2.1");
  AirlockSockaddr sa = decode_ok (&f);
  g_autofree char *tcp = airlock_attempt_key (AF_INET, SOCK_STREAM, 0, &sa);
  g_autofree char *udp = airlock_attempt_key (AF_INET, SOCK_DGRAM, 0, &sa);

  g_assert_cmpstr (tcp, ==, "inet/stream/tcp 192.0.2.1:9");
  g_assert_cmpstr (udp, ==, "inet/dgram/udp 192.0.2.1:9");
  g_assert_cmpstr (tcp, !=, udp);
}

static void
test_key_v4_and_v6_differ (void)
{
  Fixture v4 = sin_fixture (AF_INET, 9, "192.0.2.1");
  Fixture v6 = sin6_fixture (28, 9, "2001:db8::1", 0, 0);
  Fixture mapped = sin6_fixture (28, 9, "::ffff:192.0.2.1", 0, 0);
  AirlockSockaddr a = decode_ok (&v4);
  AirlockSockaddr b = decode_ok (&v6);
  AirlockSockaddr c = decode_ok (&mapped);

  assert_key (AF_INET, SOCK_STREAM, 0, &a, "inet/stream/tcp 192.0.2.1:9");
  assert_key (AF_INET6, SOCK_STREAM, 0, &b, "inet6/stream/tcp [2001:db8::1]:9");
  /* v4-mapped stays distinct from plain IPv4: nothing is merged */
  assert_key (AF_INET6, SOCK_STREAM, 0, &c, "inet6/stream/tcp [::ffff:192.0.2.1]:9");
  /* an IPv4 address on a dual-stack socket keeps the socket's family */
  assert_key (AF_INET6, SOCK_DGRAM, 0, &a, "inet6/dgram/udp 192.0.2.1:9");
}

static void
test_key_is_canonical (void)
{
  Fixture f = sin_fixture (AF_INET, 53, "192.0.2.1");
  AirlockSockaddr sa = decode_ok (&f);
  Fixture u = sun_fixture ("/run/x", 6);
  Fixture ut = sun_fixture ("/run/x\0", 7);
  AirlockSockaddr su = decode_ok (&u);
  AirlockSockaddr sut = decode_ok (&ut);
  g_autofree char *a = airlock_attempt_key (AF_INET, SOCK_DGRAM, 0, &sa);
  g_autofree char *b = airlock_attempt_key (AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                                            IPPROTO_UDP, &sa);
  g_autofree char *c = airlock_attempt_key (AF_UNIX, SOCK_RAW, 0, &su);
  g_autofree char *d = airlock_attempt_key (AF_UNIX, SOCK_DGRAM, 0, &sut);

  g_assert_cmpstr (a, ==, b);
  /* the same name, terminated or not, on the socket unix_create() makes */
  g_assert_cmpstr (c, ==, "unix/dgram/0 unix:/run/x");
  g_assert_cmpstr (c, ==, d);
}

static void
test_key_scope_ids_differ (void)
{
  Fixture a = sin6_fixture (28, 443, "fe80::1", 0, 2);
  Fixture b = sin6_fixture (28, 443, "fe80::1", 0, 3);
  AirlockSockaddr sa = decode_ok (&a);
  AirlockSockaddr sb = decode_ok (&b);

  assert_key (AF_INET6, SOCK_STREAM, 0, &sa, "inet6/stream/tcp [fe80::1%2]:443");
  assert_key (AF_INET6, SOCK_STREAM, 0, &sb, "inet6/stream/tcp [fe80::1%3]:443");
}

static void
test_key_other_families (void)
{
  Fixture unspec = { { 0 }, 2 };
  AirlockSockaddr sa = decode_ok (&unspec);

  assert_key (AF_INET, SOCK_STREAM, 0, &sa, "inet/stream/tcp (disconnect)");
  assert_key (AF_PACKET, SOCK_RAW, 0x0300, &sa, "packet/raw/768 (disconnect)");
  assert_key (99, 14, 7, &sa, "family-99/type-14/7 (disconnect)");
}

/* ---- DNS fixtures ---- */

static void
dns_u16 (GByteArray *m, guint16 v)
{
  guint8 b[2] = { (guint8) (v >> 8), (guint8) v };

  g_byte_array_append (m, b, 2);
}

static GByteArray *
dns_message (guint16 id, guint16 flags, guint16 qd, guint16 an, guint16 ns, guint16 ar)
{
  GByteArray *m = g_byte_array_new ();

  dns_u16 (m, id);
  dns_u16 (m, flags);
  dns_u16 (m, qd);
  dns_u16 (m, an);
  dns_u16 (m, ns);
  dns_u16 (m, ar);
  return m;
}

/* Appends labels from a dotted name ("www.example.com"), then the root
 * unless @terminate is FALSE (for a name that ends in a pointer). */
static void
dns_name (GByteArray *m, const char *dotted, gboolean terminate)
{
  g_auto (GStrv) labels = g_strsplit (dotted, ".", -1);

  for (guint i = 0; labels[i] != NULL; i++)
    {
      guint8 n = (guint8) strlen (labels[i]);

      if (n == 0)
        continue;
      g_byte_array_append (m, &n, 1);
      g_byte_array_append (m, (const guint8 *) labels[i], n);
    }
  if (terminate)
    g_byte_array_append (m, (const guint8 *) "", 1);
}

static void
dns_pointer (GByteArray *m, guint16 target)
{
  dns_u16 (m, (guint16) (0xc000 | target));
}

static void
dns_raw (GByteArray *m, const void *bytes, gsize len)
{
  g_byte_array_append (m, bytes, (guint) len);
}

static GByteArray *
dns_simple_query (const char *name, guint16 qtype)
{
  GByteArray *m = dns_message (0x1234, 0x0100, 1, 0, 0, 0);

  dns_name (m, name, TRUE);
  dns_u16 (m, qtype);
  dns_u16 (m, 1);
  return m;
}

static AirlockDnsQuery *
parse (GByteArray *m)
{
  return airlock_dns_parse_query (m->data, m->len, m->len);
}

static const AirlockDnsQuestion *
question (const AirlockDnsQuery *q, guint i)
{
  g_assert_cmpuint (q->questions->len, >, i);
  return q->questions->pdata[i];
}

static void
assert_problem (const AirlockDnsQuery *q, AirlockDnsProblem problem)
{
  g_assert_cmpstr (airlock_dns_problem_to_string (q->problem), ==,
                   airlock_dns_problem_to_string (problem));
  if (problem == AIRLOCK_DNS_WELL_FORMED)
    g_assert_null (q->reason);
  else
    g_assert_nonnull (q->reason);
}

/* ---- DNS queries ---- */

static void
test_dns_normal_query (void)
{
  g_autoptr (GByteArray) m = dns_simple_query ("www.example.com", 1);
  g_autoptr (AirlockDnsQuery) q = parse (m);

  assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
  g_assert_true (q->have_header);
  g_assert_cmpuint (q->id, ==, 0x1234);
  g_assert_cmpuint (q->flags, ==, 0x0100);
  g_assert_cmpuint (q->questions->len, ==, 1);
  g_assert_cmpstr (question (q, 0)->name, ==, "www.example.com.");
  g_assert_cmpuint (question (q, 0)->qtype, ==, 1);
  g_assert_cmpuint (question (q, 0)->qclass, ==, 1);
  g_assert_cmpuint (question (q, 0)->offset, ==, 12);
  g_assert_true (question (q, 0)->complete);
}

static void
test_dns_root_and_edns (void)
{
  /* "." NS, and the OPT record glibc and others add (ARCOUNT 1) */
  g_autoptr (GByteArray) m = dns_message (7, 0x0120, 1, 0, 0, 1);
  g_autoptr (AirlockDnsQuery) q = NULL;

  dns_raw (m, "\0\0\x02\0\x01", 5);
  dns_raw (m, "\0\0\x29\x04\xd0\0\0\0\0\0\0", 11);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpstr (question (q, 0)->name, ==, ".");
  g_assert_cmpuint (question (q, 0)->qtype, ==, 2);
}

static void
test_dns_compressed (void)
{
  /* two questions; the second is "mail" + a pointer to "example.com" in
   * the first (offset 12 + 4: after the 3-byte label "www") */
  g_autoptr (GByteArray) m = dns_message (1, 0, 2, 0, 0, 0);
  g_autoptr (AirlockDnsQuery) q = NULL;

  dns_name (m, "www.example.com", TRUE);
  dns_u16 (m, 1);
  dns_u16 (m, 1);
  dns_name (m, "mail", FALSE);
  dns_pointer (m, 16);
  dns_u16 (m, 28);
  dns_u16 (m, 1);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpuint (q->questions->len, ==, 2);
  g_assert_cmpstr (question (q, 1)->name, ==, "mail.example.com.");
  g_assert_cmpuint (question (q, 1)->qtype, ==, 28);
}

static void
test_dns_escaping (void)
{
  /* a label holding '.', a space, 0xff, '\\' and '"': dig writes
   * a\.b\032\255\\\" */
  g_autoptr (GByteArray) m = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (AirlockDnsQuery) q = NULL;

  dns_raw (m, "\x07" "a.b \xff\\\"" "\x03" "com" "\0", 13);
  dns_u16 (m, 16);
  dns_u16 (m, 1);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpstr (question (q, 0)->name, ==, "a\\.b\\032\\255\\\\\\\".com.");
}

static void
test_dns_pointer_loop (void)
{
  /* "a" then a pointer back to the start of the same name: 12 -> 12 … */
  g_autoptr (GByteArray) m = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (AirlockDnsQuery) q = NULL;

  dns_name (m, "a", FALSE);
  dns_pointer (m, 12);
  dns_u16 (m, 1);
  dns_u16 (m, 1);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_POINTER_LOOP);
  g_assert_cmpuint (q->problem_offset, ==, 14);
  /* the record keeps what was read: one pass over "a" */
  g_assert_false (question (q, 0)->complete);
  g_assert_cmpstr (question (q, 0)->name, ==, "a.a.");
}

static void
test_dns_pointer_forward (void)
{
  g_autoptr (GByteArray) m = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (GByteArray) self = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (AirlockDnsQuery) q = NULL;
  g_autoptr (AirlockDnsQuery) qs = NULL;

  dns_pointer (m, 18);  /* at 12, to 18: later in the message */
  dns_u16 (m, 1);
  dns_u16 (m, 1);
  dns_name (m, "x", TRUE);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_POINTER_FORWARD);

  dns_pointer (self, 12);  /* at itself */
  dns_u16 (self, 1);
  dns_u16 (self, 1);
  qs = parse (self);
  assert_problem (qs, AIRLOCK_DNS_POINTER_FORWARD);
}

static void
test_dns_pointer_out_of_bounds (void)
{
  g_autoptr (GByteArray) m = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (GByteArray) header = dns_message (1, 0, 1, 0, 0, 0);
  g_autoptr (AirlockDnsQuery) q = NULL;
  g_autoptr (AirlockDnsQuery) qh = NULL;

  dns_name (m, "a", FALSE);
  dns_pointer (m, 0x3fff);
  dns_u16 (m, 1);
  dns_u16 (m, 1);
  q = parse (m);
  assert_problem (q, AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS);
  g_assert_cmpstr (question (q, 0)->name, ==, "a.");

  dns_name (header, "a", FALSE);
  dns_pointer (header, 4);  /* into the header */
  dns_u16 (header, 1);
  dns_u16 (header, 1);
  qh = parse (header);
  assert_problem (qh, AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS);
}

static void
test_dns_pointer_chain_is_capped (void)
{
  /* Question 0 is the root; question k is a pointer to question k-1's
   * name, so resolving it follows k pointers, each strictly backwards. */
  for (guint count = 128; count <= 129; count++)
    {
      g_autoptr (GByteArray) m = dns_message (1, 0, (guint16) count, 0, 0, 0);
      g_autoptr (AirlockDnsQuery) q = NULL;

      dns_raw (m, "\0\0\x01\0\x01", 5);
      for (guint k = 1; k < count; k++)
        {
          dns_pointer (m, (guint16) (k == 1 ? 12 : 17 + 6 * (k - 2)));
          dns_u16 (m, 1);
          dns_u16 (m, 1);
        }
      q = parse (m);
      if (count == 128)
        {
          assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
          g_assert_cmpstr (question (q, 127)->name, ==, ".");
        }
      else
        {
          assert_problem (q, AIRLOCK_DNS_POINTER_LOOP);
          g_assert_cmpuint (q->questions->len, ==, 129);
          g_assert_false (question (q, 128)->complete);
        }
    }
}

static void
test_dns_reserved_label_types (void)
{
  static const guint8 types[] = { 0x40, 0x41, 0x80, 0xbf };

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autoptr (GByteArray) m = dns_message (1, 0, 1, 0, 0, 0);
      g_autoptr (AirlockDnsQuery) q = NULL;
      guint8 payload[0xc0] = { 0 };

      dns_name (m, "ok", FALSE);
      /* a length byte of 64+ followed by that many bytes: still refused */
      dns_raw (m, &types[i], 1);
      dns_raw (m, payload, types[i]);
      dns_raw (m, "\0\0\x01\0\x01", 5);
      q = parse (m);
      assert_problem (q, AIRLOCK_DNS_RESERVED_LABEL_TYPE);
      g_assert_cmpuint (q->problem_offset, ==, 15);
      g_assert_cmpstr (question (q, 0)->name, ==, "ok.");
    }
}

static GByteArray *
dns_long_name_query (guint n_labels, guint last_len)
{
  GByteArray *m = dns_message (1, 0, 1, 0, 0, 0);
  char label[64];

  memset (label, 'a', sizeof label);
  for (guint i = 0; i < n_labels; i++)
    {
      guint8 n = (guint8) (i + 1 == n_labels ? last_len : 63);

      dns_raw (m, &n, 1);
      dns_raw (m, label, n);
    }
  dns_raw (m, "\0\0\x01\0\x01", 5);
  return m;
}

static void
test_dns_name_length (void)
{
  /* 3 x (1 + 63) + (1 + 62) + 1 = 256: one too many; with 61, 255 */
  g_autoptr (GByteArray) too_long = dns_long_name_query (4, 62);
  g_autoptr (GByteArray) longest = dns_long_name_query (4, 61);
  g_autoptr (AirlockDnsQuery) q = parse (too_long);
  g_autoptr (AirlockDnsQuery) ok = parse (longest);

  assert_problem (q, AIRLOCK_DNS_NAME_TOO_LONG);
  assert_problem (ok, AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpuint (strlen (question (ok, 0)->name), ==, 254);
}

static void
test_dns_truncated (void)
{
  g_autoptr (GByteArray) m = dns_simple_query ("www.example.com", 1);
  g_autoptr (AirlockDnsQuery) header = airlock_dns_parse_query (m->data, 11, 11);
  g_autoptr (AirlockDnsQuery) in_name = airlock_dns_parse_query (m->data, 20, 20);
  g_autoptr (AirlockDnsQuery) in_type = airlock_dns_parse_query (m->data, m->len - 1,
                                                                 m->len - 1);

  assert_problem (header, AIRLOCK_DNS_TRUNCATED);
  g_assert_false (header->have_header);
  g_assert_cmpuint (header->questions->len, ==, 0);

  assert_problem (in_name, AIRLOCK_DNS_TRUNCATED);
  g_assert_false (question (in_name, 0)->complete);
  g_assert_cmpstr (question (in_name, 0)->name, ==, "www.");

  assert_problem (in_type, AIRLOCK_DNS_TRUNCATED);
  g_assert_cmpstr (question (in_type, 0)->name, ==, "www.example.com.");
  g_assert_false (question (in_type, 0)->complete);
}

static void
test_dns_clipped_is_not_truncated (void)
{
  g_autoptr (GByteArray) m = dns_simple_query ("www.example.com", 1);
  g_autoptr (AirlockDnsQuery) q = airlock_dns_parse_query (m->data, 20, m->len);

  assert_problem (q, AIRLOCK_DNS_CLIPPED);
  g_assert_cmpuint (q->len, ==, 20);
  g_assert_cmpuint (q->wire_len, ==, m->len);
  g_assert_cmpstr (question (q, 0)->name, ==, "www.");
}

static void
test_dns_qdcount_lies (void)
{
  g_autoptr (GByteArray) more = dns_simple_query ("a.example", 1);
  g_autoptr (GByteArray) fewer = dns_simple_query ("a.example", 1);
  g_autoptr (AirlockDnsQuery) q_more = NULL;
  g_autoptr (AirlockDnsQuery) q_fewer = NULL;

  /* QDCOUNT 3, one question present */
  more->data[5] = 3;
  q_more = parse (more);
  assert_problem (q_more, AIRLOCK_DNS_TRUNCATED);
  g_assert_cmpuint (q_more->questions->len, ==, 2);
  g_assert_true (question (q_more, 0)->complete);
  g_assert_false (question (q_more, 1)->complete);

  /* QDCOUNT 0: the question is bytes nothing describes */
  fewer->data[5] = 0;
  q_fewer = parse (fewer);
  assert_problem (q_fewer, AIRLOCK_DNS_TRAILING_BYTES);
  g_assert_cmpuint (q_fewer->questions->len, ==, 0);
  g_assert_cmpuint (q_fewer->problem_offset, ==, 12);
}

static void
test_dns_problem_names_are_distinct (void)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (int p = AIRLOCK_DNS_WELL_FORMED; p <= AIRLOCK_DNS_OVERSIZE; p++)
    {
      const char *name = airlock_dns_problem_to_string ((AirlockDnsProblem) p);

      g_assert_cmpstr (name, !=, "invalid");
      g_assert_false (g_hash_table_contains (seen, name));
      g_hash_table_add (seen, (gpointer) name);
    }
}

/* ---- DNS over TCP ---- */

static GPtrArray *
query_array_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_dns_query_free);
}

static void
tcp_frame (GByteArray *stream, const GByteArray *msg)
{
  dns_u16 (stream, (guint16) msg->len);
  dns_raw (stream, msg->data, msg->len);
}

static GByteArray *
three_message_stream (void)
{
  g_autoptr (GByteArray) a = dns_simple_query ("a.example", 1);
  g_autoptr (GByteArray) b = dns_simple_query ("b.example", 28);
  g_autoptr (GByteArray) c = dns_simple_query ("c.example", 16);
  GByteArray *stream = g_byte_array_new ();

  tcp_frame (stream, a);
  tcp_frame (stream, b);
  tcp_frame (stream, c);
  return stream;
}

static void
assert_three_messages (GPtrArray *queries)
{
  static const char *names[] = { "a.example.", "b.example.", "c.example." };
  guint64 offset = 0;

  g_assert_cmpuint (queries->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      const AirlockDnsQuery *q = queries->pdata[i];

      assert_problem (q, AIRLOCK_DNS_WELL_FORMED);
      g_assert_cmpstr (question (q, 0)->name, ==, names[i]);
      g_assert_cmpuint (q->stream_offset, ==, offset);
      offset += 2 + q->len;
    }
}

static void
test_tcp_three_messages_in_one_write (void)
{
  g_autoptr (GByteArray) stream = three_message_stream ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) queries = airlock_dns_tcp_stream_feed (tcp, stream->data, stream->len);

  assert_three_messages (queries);
  g_assert_null (airlock_dns_tcp_stream_finish (tcp));
}

static void
test_tcp_byte_at_a_time (void)
{
  g_autoptr (GByteArray) stream = three_message_stream ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) all = query_array_new ();

  for (guint i = 0; i < stream->len; i++)
    {
      g_autoptr (GPtrArray) queries = airlock_dns_tcp_stream_feed (tcp, stream->data + i, 1);

      g_ptr_array_extend_and_steal (all, g_steal_pointer (&queries));
    }
  assert_three_messages (all);
}

static void
test_tcp_message_across_two_writes (void)
{
  g_autoptr (GByteArray) msg = dns_simple_query ("split.example", 1);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) first = NULL;
  g_autoptr (GPtrArray) second = NULL;

  tcp_frame (stream, msg);
  first = airlock_dns_tcp_stream_feed (tcp, stream->data, 9);
  g_assert_cmpuint (first->len, ==, 0);
  g_assert_cmpuint (airlock_dns_tcp_stream_get_buffered (tcp), ==, 7);
  second = airlock_dns_tcp_stream_feed (tcp, stream->data + 9, stream->len - 9);
  g_assert_cmpuint (second->len, ==, 1);
  g_assert_cmpstr (question (second->pdata[0], 0)->name, ==, "split.example.");
  g_assert_cmpuint (airlock_dns_tcp_stream_get_buffered (tcp), ==, 0);
}

static void
test_tcp_length_prefix_split (void)
{
  g_autoptr (GByteArray) msg = dns_simple_query ("prefix.example", 1);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) a = NULL;
  g_autoptr (GPtrArray) b = NULL;
  g_autoptr (GPtrArray) c = NULL;

  tcp_frame (stream, msg);
  a = airlock_dns_tcp_stream_feed (tcp, stream->data, 1);
  b = airlock_dns_tcp_stream_feed (tcp, stream->data + 1, 1);
  c = airlock_dns_tcp_stream_feed (tcp, stream->data + 2, stream->len - 2);
  g_assert_cmpuint (a->len + b->len, ==, 0);
  g_assert_cmpuint (c->len, ==, 1);
  assert_problem (c->pdata[0], AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpstr (question (c->pdata[0], 0)->name, ==, "prefix.example.");
}

static void
test_tcp_oversize_is_bounded (void)
{
  /* a 100-byte message (a query padded with an 8-byte-per-record tail is
   * not needed: the cap is what matters) under a 64-byte cap, then a
   * normal one */
  g_autoptr (GByteArray) big = dns_simple_query ("big.example", 1);
  g_autoptr (GByteArray) next = dns_simple_query ("next.example", 1);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (64);
  g_autoptr (GPtrArray) all = query_array_new ();
  guint8 zeros[100] = { 0 };

  g_byte_array_append (big, zeros, 100 - big->len);
  g_assert_cmpuint (big->len, ==, 100);
  tcp_frame (stream, big);
  tcp_frame (stream, next);
  for (guint i = 0; i < stream->len; i += 7)
    {
      g_autoptr (GPtrArray) queries = airlock_dns_tcp_stream_feed (tcp, stream->data + i,
                                                                   MIN (7, stream->len - i));

      g_assert_cmpuint (airlock_dns_tcp_stream_get_buffered (tcp), <=, 64);
      g_ptr_array_extend_and_steal (all, g_steal_pointer (&queries));
    }
  g_assert_cmpuint (all->len, ==, 2);
  assert_problem (all->pdata[0], AIRLOCK_DNS_OVERSIZE);
  /* the question sits in the kept bytes */
  g_assert_cmpstr (question (all->pdata[0], 0)->name, ==, "big.example.");
  /* framing survived */
  assert_problem (all->pdata[1], AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpstr (question (all->pdata[1], 0)->name, ==, "next.example.");
  g_assert_cmpuint (((AirlockDnsQuery *) all->pdata[1])->stream_offset, ==, 102);
}

static void
test_tcp_finish_reports_partial (void)
{
  g_autoptr (GByteArray) msg = dns_simple_query ("cut.example", 1);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  g_autoptr (AirlockDnsTcpStream) mid_body = airlock_dns_tcp_stream_new (0);
  g_autoptr (AirlockDnsTcpStream) mid_prefix = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) a = NULL;
  g_autoptr (GPtrArray) b = NULL;
  g_autoptr (AirlockDnsQuery) qa = NULL;
  g_autoptr (AirlockDnsQuery) qb = NULL;

  tcp_frame (stream, msg);
  a = airlock_dns_tcp_stream_feed (mid_body, stream->data, stream->len - 3);
  g_assert_cmpuint (a->len, ==, 0);
  qa = airlock_dns_tcp_stream_finish (mid_body);
  g_assert_nonnull (qa);
  assert_problem (qa, AIRLOCK_DNS_TRUNCATED);
  g_assert_cmpstr (question (qa, 0)->name, ==, "cut.example.");
  g_assert_false (question (qa, 0)->complete);

  b = airlock_dns_tcp_stream_feed (mid_prefix, stream->data, 1);
  qb = airlock_dns_tcp_stream_finish (mid_prefix);
  g_assert_nonnull (qb);
  assert_problem (qb, AIRLOCK_DNS_TRUNCATED);
  g_assert_cmpuint (qb->questions->len, ==, 0);
}

static void
test_tcp_empty_message_keeps_framing (void)
{
  g_autoptr (GByteArray) msg = dns_simple_query ("after.example", 1);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) queries = NULL;

  dns_u16 (stream, 0);
  tcp_frame (stream, msg);
  queries = airlock_dns_tcp_stream_feed (tcp, stream->data, stream->len);
  g_assert_cmpuint (queries->len, ==, 2);
  assert_problem (queries->pdata[0], AIRLOCK_DNS_TRUNCATED);
  assert_problem (queries->pdata[1], AIRLOCK_DNS_WELL_FORMED);
}

static void
test_tcp_gap_stops_the_stream (void)
{
  g_autoptr (GByteArray) stream = three_message_stream ();
  g_autoptr (AirlockDnsTcpStream) tcp = airlock_dns_tcp_stream_new (0);
  g_autoptr (GPtrArray) a = airlock_dns_tcp_stream_feed (tcp, stream->data, 10);
  g_autoptr (GPtrArray) gap = airlock_dns_tcp_stream_feed_gap (tcp, 5);
  g_autoptr (GPtrArray) rest = airlock_dns_tcp_stream_feed (tcp, stream->data + 15,
                                                            stream->len - 15);

  g_assert_cmpuint (a->len, ==, 0);
  g_assert_cmpuint (gap->len, ==, 1);
  assert_problem (gap->pdata[0], AIRLOCK_DNS_CLIPPED);
  g_assert_cmpuint (rest->len, ==, 0);
  g_assert_nonnull (airlock_dns_tcp_stream_get_stop_reason (tcp));
  g_assert_cmpuint (airlock_dns_tcp_stream_get_ignored (tcp), ==, 5 + stream->len - 15);
  g_assert_null (airlock_dns_tcp_stream_finish (tcp));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/evidence/sockaddr/inet", test_sockaddr_inet);
  g_test_add_func ("/evidence/sockaddr/inet-longer-is-accepted",
                   test_sockaddr_inet_longer_is_accepted);
  g_test_add_func ("/evidence/sockaddr/inet-too-short", test_sockaddr_inet_too_short);
  g_test_add_func ("/evidence/sockaddr/inet6-24-bytes-has-no-scope",
                   test_sockaddr_inet6_rfc2133_has_no_scope);
  g_test_add_func ("/evidence/sockaddr/inet6-28-bytes-scope-id", test_sockaddr_inet6_scope_id);
  g_test_add_func ("/evidence/sockaddr/inet6-too-short", test_sockaddr_inet6_too_short);
  g_test_add_func ("/evidence/sockaddr/inet6-v4-mapped", test_sockaddr_inet6_v4_mapped);
  g_test_add_func ("/evidence/sockaddr/unix-path", test_sockaddr_unix_path);
  g_test_add_func ("/evidence/sockaddr/unix-path-ends-at-nul",
                   test_sockaddr_unix_path_ends_at_nul);
  g_test_add_func ("/evidence/sockaddr/unix-path-max-unterminated",
                   test_sockaddr_unix_path_max_unterminated);
  g_test_add_func ("/evidence/sockaddr/unix-abstract-embedded-nul",
                   test_sockaddr_unix_abstract_embedded_nul);
  g_test_add_func ("/evidence/sockaddr/unix-unnamed", test_sockaddr_unix_unnamed);
  g_test_add_func ("/evidence/sockaddr/unix-names-cannot-be-confused",
                   test_sockaddr_unix_names_cannot_be_confused);
  g_test_add_func ("/evidence/sockaddr/unix-hostile-name-is-escaped",
                   test_sockaddr_unix_hostile_name_is_escaped);
  g_test_add_func ("/evidence/sockaddr/unspec-disconnects", test_sockaddr_unspec_disconnects);
  g_test_add_func ("/evidence/sockaddr/length-bounds", test_sockaddr_length_bounds);
  g_test_add_func ("/evidence/sockaddr/unknown-family-keeps-bytes",
                   test_sockaddr_unknown_family_keeps_bytes);
  g_test_add_func ("/evidence/sockaddr/netlink", test_sockaddr_netlink);
  g_test_add_func ("/evidence/sockaddr/packet", test_sockaddr_packet);
  g_test_add_func ("/evidence/sockaddr/vsock", test_sockaddr_vsock);

  g_test_add_func ("/evidence/sockaddr/socket/udp-sendto-unspec-is-inet",
                   test_socket_udp_sendto_unspec_is_inet);
  g_test_add_func ("/evidence/sockaddr/socket/inet4-refuses-inet6",
                   test_socket_inet4_refuses_inet6);
  g_test_add_func ("/evidence/sockaddr/socket/inet6-dual-stack", test_socket_inet6_dual_stack);
  g_test_add_func ("/evidence/sockaddr/socket/udp6-sendto-unspec-is-no-address",
                   test_socket_udp6_sendto_unspec_is_no_address);
  g_test_add_func ("/evidence/sockaddr/socket/ping6-needs-whole-sockaddr-in6",
                   test_socket_ping6_needs_whole_sockaddr_in6);
  g_test_add_func ("/evidence/sockaddr/socket/sendmsg-clamps-sendto-refuses",
                   test_socket_sendmsg_clamps_sendto_refuses);
  g_test_add_func ("/evidence/sockaddr/socket/tcp-send-ignores-address",
                   test_socket_tcp_send_ignores_address);
  g_test_add_func ("/evidence/sockaddr/socket/inet-bind", test_socket_inet_bind);
  g_test_add_func ("/evidence/sockaddr/socket/unix", test_socket_unix);
  g_test_add_func ("/evidence/sockaddr/socket/packet-reads-any-family",
                   test_socket_packet_reads_any_family);
  g_test_add_func ("/evidence/sockaddr/socket/netlink-and-vsock", test_socket_netlink_and_vsock);

  g_test_add_func ("/evidence/sockaddr/key/tcp-and-udp-differ", test_key_tcp_and_udp_differ);
  g_test_add_func ("/evidence/sockaddr/key/v4-and-v6-differ", test_key_v4_and_v6_differ);
  g_test_add_func ("/evidence/sockaddr/key/is-canonical", test_key_is_canonical);
  g_test_add_func ("/evidence/sockaddr/key/scope-ids-differ", test_key_scope_ids_differ);
  g_test_add_func ("/evidence/sockaddr/key/other-families", test_key_other_families);

  g_test_add_func ("/evidence/dns/normal-query", test_dns_normal_query);
  g_test_add_func ("/evidence/dns/root-and-edns", test_dns_root_and_edns);
  g_test_add_func ("/evidence/dns/compressed", test_dns_compressed);
  g_test_add_func ("/evidence/dns/escaping", test_dns_escaping);
  g_test_add_func ("/evidence/dns/pointer-loop", test_dns_pointer_loop);
  g_test_add_func ("/evidence/dns/pointer-forward", test_dns_pointer_forward);
  g_test_add_func ("/evidence/dns/pointer-out-of-bounds", test_dns_pointer_out_of_bounds);
  g_test_add_func ("/evidence/dns/pointer-chain-is-capped", test_dns_pointer_chain_is_capped);
  g_test_add_func ("/evidence/dns/reserved-label-types", test_dns_reserved_label_types);
  g_test_add_func ("/evidence/dns/name-length", test_dns_name_length);
  g_test_add_func ("/evidence/dns/truncated", test_dns_truncated);
  g_test_add_func ("/evidence/dns/clipped-is-not-truncated", test_dns_clipped_is_not_truncated);
  g_test_add_func ("/evidence/dns/qdcount-lies", test_dns_qdcount_lies);
  g_test_add_func ("/evidence/dns/problem-names-are-distinct",
                   test_dns_problem_names_are_distinct);

  g_test_add_func ("/evidence/dns-tcp/three-messages-in-one-write",
                   test_tcp_three_messages_in_one_write);
  g_test_add_func ("/evidence/dns-tcp/byte-at-a-time", test_tcp_byte_at_a_time);
  g_test_add_func ("/evidence/dns-tcp/message-across-two-writes",
                   test_tcp_message_across_two_writes);
  g_test_add_func ("/evidence/dns-tcp/length-prefix-split", test_tcp_length_prefix_split);
  g_test_add_func ("/evidence/dns-tcp/oversize-is-bounded", test_tcp_oversize_is_bounded);
  g_test_add_func ("/evidence/dns-tcp/finish-reports-partial", test_tcp_finish_reports_partial);
  g_test_add_func ("/evidence/dns-tcp/empty-message-keeps-framing",
                   test_tcp_empty_message_keeps_framing);
  g_test_add_func ("/evidence/dns-tcp/gap-stops-the-stream", test_tcp_gap_stops_the_stream);

  return g_test_run ();
}
