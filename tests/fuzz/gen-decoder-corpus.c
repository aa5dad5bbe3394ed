/* Writes the seed corpora of fuzz-sockaddr and fuzz-dns
 * (tests/fuzz/corpus/sockaddr/, tests/fuzz/corpus/dns/): well-formed
 * inputs for every family and record shape, and one input stopping at each
 * check the decoders make.
 *
 *   gen-decoder-corpus sockaddr|dns DIR           write the seeds into DIR
 *   gen-decoder-corpus --check sockaddr|dns DIR   exit 1 unless DIR holds
 *                                                 exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-sockaddr.h"
#include "corpus-seed.h"

/* ---- sockaddr seeds: the fuzz-sockaddr.h header, then the address ---- */

static void
put_u8 (GByteArray *s, guint8 v)
{
  g_byte_array_append (s, &v, 1);
}

static void
put_le16 (GByteArray *s, guint16 v)
{
  put_u8 (s, (guint8) v);
  put_u8 (s, (guint8) (v >> 8));
}

static void
put_le32 (GByteArray *s, guint32 v)
{
  for (int i = 0; i < 4; i++)
    put_u8 (s, (guint8) (v >> (8 * i)));
}

static void
put_be16 (GByteArray *s, guint16 v)
{
  put_u8 (s, (guint8) (v >> 8));
  put_u8 (s, (guint8) v);
}

static void
put_raw (GByteArray *s, const void *data, gsize len)
{
  g_byte_array_append (s, data, (guint) len);
}

static void
put_zeros (GByteArray *s, gsize n)
{
  for (gsize i = 0; i < n; i++)
    put_u8 (s, 0);
}

static void
sa_header (GByteArray *s, int call, int family, int type, int protocol)
{
  put_u8 (s, (guint8) call);
  put_u8 (s, fuzz_sockaddr_index (fuzz_sockaddr_families,
                                  FUZZ_N_ELEMENTS (fuzz_sockaddr_families), family));
  put_u8 (s, fuzz_sockaddr_index (fuzz_sockaddr_types, FUZZ_N_ELEMENTS (fuzz_sockaddr_types),
                                  type));
  put_u8 (s, fuzz_sockaddr_index (fuzz_sockaddr_protocols,
                                  FUZZ_N_ELEMENTS (fuzz_sockaddr_protocols), protocol));
}

/* AirlockSockaddrCall values, without the library header */
enum { CONNECT, BIND, SENDTO, SENDMSG };

static void
sa_in (GByteArray *s, guint16 family, guint16 port, const char *address)
{
  guint8 addr[4];

  g_assert (inet_pton (AF_INET, address, addr) == 1);
  put_le16 (s, family);
  put_be16 (s, port);
  put_raw (s, addr, 4);
  put_zeros (s, 8);
}

static void
sa_in6 (GByteArray *s, gsize len, guint16 port, const char *address, guint32 scope_id)
{
  guint8 addr[16];

  g_assert (inet_pton (AF_INET6, address, addr) == 1);
  put_le16 (s, AF_INET6);
  put_be16 (s, port);
  put_zeros (s, 4);
  put_raw (s, addr, 16);
  if (len >= 28)
    put_le32 (s, scope_id);
}

static void
sa_un (GByteArray *s, const void *path, gsize len)
{
  put_le16 (s, AF_UNIX);
  put_raw (s, path, len);
}

static void
sockaddr_inet_tcp_connect (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET, SOCK_STREAM, 0);
  sa_in (s, AF_INET, 80, "192.0.2.1");
}

static void
sockaddr_inet_udp_sendto_unspec (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET, SOCK_DGRAM, 0);
  sa_in (s, AF_UNSPEC, 53, "192.0.2.1");
}

static void
sockaddr_inet_raw_sendmsg (GByteArray *s)
{
  sa_header (s, SENDMSG, AF_INET, SOCK_RAW, IPPROTO_ICMP);
  sa_in (s, AF_INET, 0, "198.51.100.1");
}

static void
sockaddr_inet_ping_sendto (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  sa_in (s, AF_INET, 0, "192.0.2.2");
}

static void
sockaddr_inet_bind_unspec_any (GByteArray *s)
{
  sa_header (s, BIND, AF_INET, SOCK_STREAM, IPPROTO_TCP);
  sa_in (s, AF_UNSPEC, 8080, "0.0.0.0");
}

static void
sockaddr_inet6_24_no_scope (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET6, SOCK_STREAM, 0);
  sa_in6 (s, 24, 443, "fe80::1", 0);
}

static void
sockaddr_inet6_28_scope (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET6, SOCK_DGRAM, 0);
  sa_in6 (s, 28, 443, "2001:db8::1", 2);
}

static void
sockaddr_inet6_v4_mapped (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET6, SOCK_DGRAM, 0);
  sa_in6 (s, 28, 53, "::ffff:192.0.2.1", 0);
}

static void
sockaddr_inet6_udp_sendto_inet (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET6, SOCK_DGRAM, IPPROTO_UDP);
  sa_in (s, AF_INET, 53, "192.0.2.1");
}

static void
sockaddr_inet6_ping_sendto (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
  sa_in6 (s, 28, 0, "2001:db8::2", 0);
}

static void
sockaddr_inet6_raw_sendto_unspec (GByteArray *s)
{
  sa_header (s, SENDTO, AF_INET6, SOCK_RAW, IPPROTO_UDP);
  sa_in6 (s, 24, 17, "2001:db8::3", 0);
  s->data[FUZZ_SOCKADDR_HEADER] = 0;  /* sin6_family = AF_UNSPEC */
}

static void
sockaddr_unix_path (GByteArray *s)
{
  sa_header (s, CONNECT, AF_UNIX, SOCK_STREAM, 0);
  sa_un (s, "/run/x", 7);
}

static void
sockaddr_unix_path_max (GByteArray *s)
{
  char path[108];

  memset (path, 'p', sizeof path);
  path[0] = '/';
  sa_header (s, CONNECT, AF_UNIX, SOCK_STREAM, 0);
  sa_un (s, path, sizeof path);
}

static void
sockaddr_unix_abstract_nul (GByteArray *s)
{
  sa_header (s, SENDTO, AF_UNIX, SOCK_DGRAM, 0);
  sa_un (s, "\0ab\0c", 5);
}

static void
sockaddr_unix_unnamed_bind (GByteArray *s)
{
  sa_header (s, BIND, AF_UNIX, SOCK_STREAM, 0);
  put_le16 (s, AF_UNIX);
}

static void
sockaddr_unix_hostile (GByteArray *s)
{
  sa_header (s, CONNECT, AF_UNIX, SOCK_SEQPACKET, 0);
  sa_un (s, "@\n\x1b[2J\\\xff\xe2\x80\xae", 10);
}

static void
sockaddr_netlink (GByteArray *s)
{
  sa_header (s, SENDTO, AF_NETLINK, SOCK_RAW, 0);
  put_le16 (s, AF_NETLINK);
  put_le16 (s, 0);
  put_le32 (s, 0);
  put_le32 (s, 1);
}

static void
sockaddr_packet (GByteArray *s)
{
  sa_header (s, SENDTO, AF_PACKET, SOCK_RAW, 0);
  put_le16 (s, AF_PACKET);
  put_be16 (s, 0x0800);
  put_le32 (s, 2);
  put_le16 (s, 1);
  put_u8 (s, 0);
  put_u8 (s, 6);
  put_raw (s, "\x52\x54\x00\x12\x34\x56\0\0", 8);
}

static void
sockaddr_vsock (GByteArray *s)
{
  sa_header (s, CONNECT, AF_VSOCK, SOCK_STREAM, 0);
  put_le16 (s, AF_VSOCK);
  put_le16 (s, 0);
  put_le32 (s, 1024);
  put_le32 (s, 2);
  put_u8 (s, 1);
  put_zeros (s, 3);
}

static void
sockaddr_unspec_disconnect (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET, SOCK_DGRAM, 0);
  put_zeros (s, 16);
}

static void
sockaddr_sendmsg_oversize (GByteArray *s)
{
  sa_header (s, SENDMSG, AF_INET, SOCK_DGRAM, 0);
  sa_in (s, AF_INET, 53, "192.0.2.1");
  put_zeros (s, 200 - 16);
}

static void
sockaddr_connect_oversize (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET, SOCK_STREAM, 0);
  sa_in (s, AF_INET, 80, "192.0.2.1");
  put_zeros (s, 129 - 16);
}

static void
sockaddr_unknown_family (GByteArray *s)
{
  sa_header (s, CONNECT, 42, SOCK_STREAM, 0);
  put_le16 (s, 42);
  put_raw (s, "\x01\x02\xfe\xff", 4);
}

static void
sockaddr_too_short (GByteArray *s)
{
  sa_header (s, CONNECT, AF_INET6, SOCK_STREAM, 0);
  sa_in6 (s, 24, 443, "2001:db8::1", 0);
  g_byte_array_set_size (s, s->len - 1);
}

/* ---- DNS seeds: a message, or (tcp-*) a TCP stream ---- */

static void
dns_header (GByteArray *s, guint16 qd, guint16 an, guint16 ns, guint16 ar)
{
  put_be16 (s, 0xbeef);
  put_be16 (s, 0x0100);
  put_be16 (s, qd);
  put_be16 (s, an);
  put_be16 (s, ns);
  put_be16 (s, ar);
}

/* labels of a dotted name, then the root unless @terminate is FALSE */
static void
dns_name (GByteArray *s, const char *dotted, gboolean terminate)
{
  g_auto (GStrv) labels = g_strsplit (dotted, ".", -1);

  for (guint i = 0; labels[i] != NULL; i++)
    {
      gsize n = strlen (labels[i]);

      if (n == 0)
        continue;
      put_u8 (s, (guint8) n);
      put_raw (s, labels[i], n);
    }
  if (terminate)
    put_u8 (s, 0);
}

static void
dns_question_tail (GByteArray *s, guint16 qtype)
{
  put_be16 (s, qtype);
  put_be16 (s, 1);
}

static void
dns_query (GByteArray *s, const char *name, guint16 qtype)
{
  dns_header (s, 1, 0, 0, 0);
  dns_name (s, name, TRUE);
  dns_question_tail (s, qtype);
}

static void
dns_query_a (GByteArray *s)
{
  dns_query (s, "www.example.com", 1);
}

static void
dns_query_root_edns (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 1);
  put_u8 (s, 0);
  dns_question_tail (s, 2);
  put_raw (s, "\0\0\x29\x04\xd0\0\0\0\0\0\0", 11);
}

static void
dns_query_compressed (GByteArray *s)
{
  dns_header (s, 2, 0, 0, 0);
  dns_name (s, "www.example.com", TRUE);
  dns_question_tail (s, 1);
  dns_name (s, "mail", FALSE);
  put_be16 (s, 0xc000 | 16);
  dns_question_tail (s, 28);
}

static void
dns_query_escaping (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 0);
  put_raw (s, "\x07" "a.b \xff\\\"" "\x03" "com", 12);
  put_u8 (s, 0);
  dns_question_tail (s, 16);
}

static void
dns_pointer_loop (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 0);
  dns_name (s, "a", FALSE);
  put_be16 (s, 0xc000 | 12);
  dns_question_tail (s, 1);
}

static void
dns_pointer_forward (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 0);
  put_be16 (s, 0xc000 | 18);
  dns_question_tail (s, 1);
  dns_name (s, "x", TRUE);
}

static void
dns_pointer_out_of_bounds (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 0);
  dns_name (s, "a", FALSE);
  put_be16 (s, 0xffff);
  dns_question_tail (s, 1);
}

static void
dns_pointer_into_header (GByteArray *s)
{
  dns_header (s, 1, 0, 0, 0);
  put_be16 (s, 0xc000 | 4);
  dns_question_tail (s, 1);
}

static void
dns_pointer_chain (GByteArray *s)
{
  /* question k points at question k-1: 129 questions, the last one past
   * the cap on pointers per name */
  dns_header (s, 129, 0, 0, 0);
  put_u8 (s, 0);
  dns_question_tail (s, 1);
  for (guint k = 1; k < 129; k++)
    {
      put_be16 (s, (guint16) (0xc000 | (k == 1 ? 12 : 17 + 6 * (k - 2))));
      dns_question_tail (s, 1);
    }
}

static void
dns_label_type (GByteArray *s, guint8 type)
{
  dns_header (s, 1, 0, 0, 0);
  dns_name (s, "ok", FALSE);
  put_u8 (s, type);
  put_zeros (s, type);
  put_u8 (s, 0);
  dns_question_tail (s, 1);
}

static void
dns_label_0x40 (GByteArray *s)
{
  dns_label_type (s, 0x40);
}

static void
dns_label_0x80 (GByteArray *s)
{
  dns_label_type (s, 0x80);
}

static void
dns_long_name (GByteArray *s, guint last_len)
{
  char label[63];

  memset (label, 'a', sizeof label);
  dns_header (s, 1, 0, 0, 0);
  for (guint i = 0; i < 4; i++)
    {
      guint n = i == 3 ? last_len : 63;

      put_u8 (s, (guint8) n);
      put_raw (s, label, n);
    }
  put_u8 (s, 0);
  dns_question_tail (s, 1);
}

static void
dns_name_255 (GByteArray *s)
{
  dns_long_name (s, 61);
}

static void
dns_name_256 (GByteArray *s)
{
  dns_long_name (s, 62);
}

static void
dns_truncated_name (GByteArray *s)
{
  dns_query (s, "www.example.com", 1);
  g_byte_array_set_size (s, 20);
}

static void
dns_truncated_header (GByteArray *s)
{
  dns_query (s, "www.example.com", 1);
  g_byte_array_set_size (s, 11);
}

static void
dns_qdcount_high (GByteArray *s)
{
  dns_query (s, "a.example", 1);
  s->data[5] = 3;
}

static void
dns_qdcount_low (GByteArray *s)
{
  dns_query (s, "a.example", 1);
  s->data[5] = 0;
}

static void
dns_tcp_frame (GByteArray *s, const char *name)
{
  g_autoptr (GByteArray) m = g_byte_array_new ();

  dns_query (m, name, 1);
  put_be16 (s, (guint16) m->len);
  put_raw (s, m->data, m->len);
}

static void
dns_tcp_three_messages (GByteArray *s)
{
  dns_tcp_frame (s, "a.example");
  dns_tcp_frame (s, "b.example");
  dns_tcp_frame (s, "c.example");
}

static void
dns_tcp_partial (GByteArray *s)
{
  dns_tcp_frame (s, "a.example");
  dns_tcp_frame (s, "cut.example");
  g_byte_array_set_size (s, s->len - 3);
}

static const CorpusSeed sockaddr_seeds[] = {
  { "inet-tcp-connect", sockaddr_inet_tcp_connect },
  { "inet-udp-sendto-unspec", sockaddr_inet_udp_sendto_unspec },
  { "inet-raw-sendmsg", sockaddr_inet_raw_sendmsg },
  { "inet-ping-sendto", sockaddr_inet_ping_sendto },
  { "inet-bind-unspec-any", sockaddr_inet_bind_unspec_any },
  { "inet6-24-no-scope", sockaddr_inet6_24_no_scope },
  { "inet6-28-scope", sockaddr_inet6_28_scope },
  { "inet6-v4-mapped", sockaddr_inet6_v4_mapped },
  { "inet6-udp-sendto-inet", sockaddr_inet6_udp_sendto_inet },
  { "inet6-ping-sendto", sockaddr_inet6_ping_sendto },
  { "inet6-raw-sendto-unspec", sockaddr_inet6_raw_sendto_unspec },
  { "unix-path", sockaddr_unix_path },
  { "unix-path-max", sockaddr_unix_path_max },
  { "unix-abstract-nul", sockaddr_unix_abstract_nul },
  { "unix-unnamed-bind", sockaddr_unix_unnamed_bind },
  { "unix-hostile", sockaddr_unix_hostile },
  { "netlink", sockaddr_netlink },
  { "packet", sockaddr_packet },
  { "vsock", sockaddr_vsock },
  { "unspec-disconnect", sockaddr_unspec_disconnect },
  { "sendmsg-oversize", sockaddr_sendmsg_oversize },
  { "connect-oversize", sockaddr_connect_oversize },
  { "unknown-family", sockaddr_unknown_family },
  { "too-short", sockaddr_too_short },
};

static const CorpusSeed dns_seeds[] = {
  { "query-a", dns_query_a },
  { "query-root-edns", dns_query_root_edns },
  { "query-compressed", dns_query_compressed },
  { "query-escaping", dns_query_escaping },
  { "pointer-loop", dns_pointer_loop },
  { "pointer-forward", dns_pointer_forward },
  { "pointer-out-of-bounds", dns_pointer_out_of_bounds },
  { "pointer-into-header", dns_pointer_into_header },
  { "pointer-chain", dns_pointer_chain },
  { "label-0x40", dns_label_0x40 },
  { "label-0x80", dns_label_0x80 },
  { "name-255", dns_name_255 },
  { "name-256", dns_name_256 },
  { "truncated-name", dns_truncated_name },
  { "truncated-header", dns_truncated_header },
  { "qdcount-high", dns_qdcount_high },
  { "qdcount-low", dns_qdcount_low },
  { "tcp-three-messages", dns_tcp_three_messages },
  { "tcp-partial", dns_tcp_partial },
};

/* Two corpora, one per harness: gen-decoder-corpus [--check] sockaddr|dns DIR */
static const CorpusSet decoders[] = {
  { "sockaddr", G_N_ELEMENTS (sockaddr_seeds), sockaddr_seeds },
  { "dns", G_N_ELEMENTS (dns_seeds), dns_seeds },
};

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, decoders, G_N_ELEMENTS (decoders));
}
