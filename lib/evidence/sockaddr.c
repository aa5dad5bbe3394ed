/* Socket address decoding (see sockaddr.h).
 *
 * This half holds the address layouts, the family-driven decoder (which
 * follows connect(2) on a socket of the address's own family) and the text
 * forms; sockaddr-socket.c holds what each socket accepts in each call.
 * Every rule is the kernel's, next to the kernel function that applies it
 * (paths relative to a Linux 6.1 tree).
 *
 * Lengths: every read is preceded by a check of @len against the offset it
 * reads, and @len is never more than AIRLOCK_SOCKADDR_MAX (checked first),
 * so nothing here reads past what the caller handed in. */
#include "config.h"

#include "sockaddr-private.h"

#include "frame-private.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

/* The layouts the decoders assume are this host's (the guests' ABI). */
G_STATIC_ASSERT (sizeof (struct sockaddr_storage) == AIRLOCK_SOCKADDR_MAX);
G_STATIC_ASSERT (sizeof (struct sockaddr_in) == SOCKADDR_IN_LEN);
G_STATIC_ASSERT (sizeof (struct sockaddr_in6) == SOCKADDR_IN6_LEN);
G_STATIC_ASSERT (offsetof (struct sockaddr_in6, sin6_scope_id) == SOCKADDR_IN6_LEN_RFC2133);
G_STATIC_ASSERT (sizeof (struct sockaddr_un) == SOCKADDR_UN_LEN);
G_STATIC_ASSERT (offsetof (struct sockaddr_un, sun_path) == SOCKADDR_FAMILY_LEN);
G_STATIC_ASSERT (sizeof (((struct sockaddr_un *) 0)->sun_path) == AIRLOCK_SOCKADDR_UNIX_PATH_MAX);
G_STATIC_ASSERT (sizeof (struct sockaddr_nl) == SOCKADDR_NL_LEN);
G_STATIC_ASSERT (sizeof (struct sockaddr_ll) == SOCKADDR_LL_LEN);
G_STATIC_ASSERT (offsetof (struct sockaddr_ll, sll_addr) == SOCKADDR_LL_ADDR_OFFSET);
G_STATIC_ASSERT (sizeof (struct sockaddr_vm) == SOCKADDR_VM_LEN);
G_STATIC_ASSERT (offsetof (struct sockaddr_vm, svm_flags) == 12);

G_DEFINE_QUARK (airlock-sockaddr-error-quark, airlock_sockaddr_error)

char *
airlock_socket_family_to_string (int family)
{
  switch (family)
    {
    case AF_UNSPEC:
      return g_strdup ("unspec");
    case AF_UNIX:
      return g_strdup ("unix");
    case AF_INET:
      return g_strdup ("inet");
    case AF_INET6:
      return g_strdup ("inet6");
    case AF_NETLINK:
      return g_strdup ("netlink");
    case AF_PACKET:
      return g_strdup ("packet");
    case AF_VSOCK:
      return g_strdup ("vsock");
    default:
      return g_strdup_printf ("family-%d", family);
    }
}

gboolean
airlock_sa_error (GError **error, AirlockSockaddrError code, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, AIRLOCK_SOCKADDR_ERROR, code, message);
  return FALSE;
}

void
airlock_sa_init (AirlockSockaddr *sa, AirlockSockaddrEffect effect, guint16 family,
                 const guint8 *bytes, gsize len)
{
  g_assert (len <= AIRLOCK_SOCKADDR_MAX);

  memset (sa, 0, sizeof *sa);
  sa->effect = effect;
  sa->family = family;
  sa->family_field = len >= SOCKADDR_FAMILY_LEN ? sockaddr_get_le16 (bytes) : AF_UNSPEC;
  sa->len = len;
  if (len > 0)
    memcpy (sa->bytes, bytes, len);
}

/* ---- one reader per address layout; callers checked the length ---- */

/* struct sockaddr_in: family, port (be16), address (4 bytes), 8 bytes of
 * sin_zero the kernel does not look at. */
void
airlock_sa_read_in (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  g_assert (len >= SOCKADDR_IN_LEN);

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_INET, bytes, len);
  sa->inet.is_v4 = TRUE;
  sa->inet.port = sockaddr_get_be16 (bytes + 2);
  memcpy (sa->inet.addr, bytes + 4, 4);
  memcpy (sa->inet.v4, bytes + 4, 4);
}

/* struct sockaddr_in6: family, port (be16), flowinfo (be32), address (16),
 * then sin6_scope_id (native u32) only when the length covers it: the
 * kernel reads it only when addr_len >= sizeof (struct sockaddr_in6)
 * (net/ipv6/tcp_ipv6.c tcp_v6_connect, net/ipv6/datagram.c
 * __ip6_datagram_connect); RFC 2133 addresses are 24 bytes long. */
void
airlock_sa_read_in6 (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  static const guint8 v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

  g_assert (len >= SOCKADDR_IN6_LEN_RFC2133);

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_INET6, bytes, len);
  sa->inet.port = sockaddr_get_be16 (bytes + 2);
  sa->inet.flowinfo = sockaddr_get_be32 (bytes + 4);
  memcpy (sa->inet.addr, bytes + 8, 16);
  if (len >= SOCKADDR_IN6_LEN)
    {
      sa->inet.has_scope_id = TRUE;
      sa->inet.scope_id = sockaddr_get_le32 (bytes + 24);
    }
  /* ipv6_addr_v4mapped(): TCP, UDP and ping send these over IPv4
   * (tcp_v6_connect, udpv6_sendmsg, __ip6_datagram_connect). */
  if (memcmp (sa->inet.addr, v4_mapped_prefix, sizeof v4_mapped_prefix) == 0)
    {
      sa->inet.v4_mapped = TRUE;
      memcpy (sa->inet.v4, sa->inet.addr + 12, 4);
    }
}

/* struct sockaddr_un, length 2..110 (checked by the caller).
 *
 * net/unix/af_unix.c: an address of exactly sun_family is the unnamed one
 * (unix_bind autobinds).  A first path byte of NUL makes an abstract name:
 * the kernel hashes and compares the whole address, addr_len bytes
 * (unix_find_abstract), so every byte to the end is part of the name,
 * NULs included.  Otherwise it is a filesystem name: unix_mkname_bsd()
 * writes a NUL at addr_len and takes strlen(), so the name ends at the
 * first NUL, or at the end of the address when there is none (legal: a
 * 108-byte path with no terminator). */
void
airlock_sa_read_un (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  const guint8 *path = bytes + SOCKADDR_FAMILY_LEN;
  gsize path_bytes;

  g_assert (len >= SOCKADDR_FAMILY_LEN && len <= SOCKADDR_UN_LEN);
  path_bytes = len - SOCKADDR_FAMILY_LEN;

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_UNIX, bytes, len);
  if (path_bytes == 0)
    {
      sa->un.unnamed = TRUE;
      return;
    }
  if (path[0] == '\0')
    {
      sa->un.abstract = TRUE;
      sa->un.path_len = path_bytes - 1;
      memcpy (sa->un.path, path + 1, sa->un.path_len);
      return;
    }

  {
    const guint8 *nul = memchr (path, '\0', path_bytes);

    sa->un.unterminated = nul == NULL;
    sa->un.path_len = nul != NULL ? (gsize) (nul - path) : path_bytes;
    memcpy (sa->un.path, path, sa->un.path_len);
  }
}

/* struct sockaddr_nl: family, pad, pid (u32), groups (u32). */
void
airlock_sa_read_nl (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  g_assert (len >= SOCKADDR_NL_LEN);

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_NETLINK, bytes, len);
  sa->nl.pid = sockaddr_get_le32 (bytes + 4);
  sa->nl.groups = sockaddr_get_le32 (bytes + 8);
}

/* struct sockaddr_ll: family, protocol (be16), ifindex (int), hatype (u16),
 * pkttype (u8), halen (u8), then the hardware address.  The kernel reads
 * halen bytes of it when the length covers them (packet_snd refuses
 * addresses shorter than 12 + halen); bind() does not look at it, so only
 * the bytes present are kept. */
void
airlock_sa_read_ll (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  gsize addr_len;

  g_assert (len >= SOCKADDR_LL_LEN && len <= AIRLOCK_SOCKADDR_MAX);

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_PACKET, bytes, len);
  sa->ll.protocol = sockaddr_get_be16 (bytes + 2);
  sa->ll.ifindex = (gint32) sockaddr_get_le32 (bytes + 4);
  sa->ll.hatype = sockaddr_get_le16 (bytes + 8);
  sa->ll.pkttype = bytes[10];
  sa->ll.halen = bytes[11];
  addr_len = MIN ((gsize) sa->ll.halen, len - SOCKADDR_LL_ADDR_OFFSET);
  memcpy (sa->ll.addr, bytes + SOCKADDR_LL_ADDR_OFFSET, addr_len);
}

/* struct sockaddr_vm: family, reserved (u16), port (u32), cid (u32),
 * flags (u8), zero[3]. */
void
airlock_sa_read_vm (AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  g_assert (len >= SOCKADDR_VM_LEN);

  airlock_sa_init (sa, AIRLOCK_SOCKADDR_ADDRESS, AF_VSOCK, bytes, len);
  sa->vm.port = sockaddr_get_le32 (bytes + 4);
  sa->vm.cid = sockaddr_get_le32 (bytes + 8);
  sa->vm.flags = bytes[12];
}

void
airlock_sa_init_effect (AirlockSockaddr *sa, AirlockSockaddrEffect effect, const guint8 *bytes,
                        gsize len)
{
  airlock_sa_init (sa, effect, AF_UNSPEC, bytes, len);
}

/* ---- checks shared by several sockets ---- */

gboolean
airlock_sa_has_family (const char *what, gsize len, GError **error)
{
  if (len < SOCKADDR_FAMILY_LEN)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT,
                             "%s: a sockaddr of %" G_GSIZE_FORMAT " bytes cannot hold "
                             "sa_family (2 bytes); the kernel refuses it with EINVAL",
                             what, len);
  return TRUE;
}

gboolean
airlock_sa_min_len (const char *what, const char *layout, gsize min, const char *errno_name,
                    gsize len, GError **error)
{
  if (len < min)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT,
                             "%s: a sockaddr of %" G_GSIZE_FORMAT " bytes is shorter than "
                             "the %" G_GSIZE_FORMAT " bytes of %s; the kernel refuses it "
                             "with %s",
                             what, len, min, layout, errno_name);
  return TRUE;
}

gboolean
airlock_sa_wrong_family (const char *what, guint family, const char *expected,
                         const char *errno_name, GError **error)
{
  g_autofree char *name = airlock_socket_family_to_string ((int) family);

  return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_FAMILY,
                           "%s: sa_family %u (%s) is not %s; the kernel refuses it with %s",
                           what, family, name, expected, errno_name);
}

/* net/unix/af_unix.c unix_validate_addr(): a name needs at least one byte
 * after sun_family and fits in struct sockaddr_un; the family must be
 * AF_UNIX.  Every failure is EINVAL. */
gboolean
airlock_sa_unix_name (const char *what, const guint8 *bytes, gsize len, GError **error)
{
  if (len > SOCKADDR_UN_LEN)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_LONG,
                             "%s: a unix sockaddr of %" G_GSIZE_FORMAT " bytes is longer than "
                             "struct sockaddr_un (110 bytes); the kernel refuses it with EINVAL",
                             what, len);
  if (len <= SOCKADDR_FAMILY_LEN)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT,
                             "%s: a unix sockaddr of %" G_GSIZE_FORMAT " bytes holds no name; "
                             "the kernel refuses it with EINVAL",
                             what, len);
  if (sockaddr_get_le16 (bytes) != AF_UNIX)
    return airlock_sa_wrong_family (what, sockaddr_get_le16 (bytes), "AF_UNIX", "EINVAL", error);
  return TRUE;
}

/* net/vmw_vsock/vsock_addr.c vsock_addr_cast() and vsock_addr_validate():
 * shorter than struct sockaddr_vm, another family, or a flag other than
 * VMADDR_FLAG_TO_HOST is refused; every vsock call turns that into
 * EINVAL (af_vsock.c). */
gboolean
airlock_sa_vsock (const char *what, const guint8 *bytes, gsize len, GError **error)
{
  if (!airlock_sa_min_len (what, "struct sockaddr_vm", SOCKADDR_VM_LEN, "EINVAL", len, error))
    return FALSE;
  if (sockaddr_get_le16 (bytes) != AF_VSOCK)
    return airlock_sa_wrong_family (what, sockaddr_get_le16 (bytes), "AF_VSOCK", "EINVAL", error);
  if (bytes[12] & ~VMADDR_FLAG_TO_HOST)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_INVALID,
                             "%s: vsock flags 0x%02x carry bits other than "
                             "VMADDR_FLAG_TO_HOST; the kernel refuses them with EINVAL",
                             what, bytes[12]);
  return TRUE;
}

/* net/packet/af_packet.c packet_snd(): at least a struct sockaddr_ll, and
 * enough bytes for sll_halen bytes of address.  No family check. */
gboolean
airlock_sa_packet_send (const char *what, const guint8 *bytes, gsize len, GError **error)
{
  if (!airlock_sa_min_len (what, "struct sockaddr_ll", SOCKADDR_LL_LEN, "EINVAL", len, error))
    return FALSE;
  if (len < SOCKADDR_LL_ADDR_OFFSET + (gsize) bytes[11])
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_SHORT,
                             "%s: a packet sockaddr of %" G_GSIZE_FORMAT " bytes is shorter "
                             "than the %" G_GSIZE_FORMAT " bytes its sll_halen of %u needs; "
                             "the kernel refuses it with EINVAL",
                             what, len, SOCKADDR_LL_ADDR_OFFSET + (gsize) bytes[11], bytes[11]);
  return TRUE;
}

/* ---- family-driven decoding ---- */

gboolean
airlock_sockaddr_decode (const guint8 *bytes, gsize len, AirlockSockaddr *ret, GError **error)
{
  const char *what = "connect()";
  AirlockSockaddr sa;
  guint16 family;

  g_return_val_if_fail (bytes != NULL || len == 0, FALSE);
  g_return_val_if_fail (ret != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* net/socket.c move_addr_to_kernel(): connect, bind and sendto refuse
   * more than a sockaddr_storage before any family looks at it. */
  if (len > AIRLOCK_SOCKADDR_MAX)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_LONG,
                             "%s: a sockaddr of %" G_GSIZE_FORMAT " bytes is longer than "
                             "struct sockaddr_storage (128 bytes); the kernel refuses it with "
                             "EINVAL",
                             what, len);
  if (!airlock_sa_has_family (what, len, error))
    return FALSE;

  family = sockaddr_get_le16 (bytes);
  switch (family)
    {
    case AF_UNSPEC:
      /* __inet_stream_connect, inet_dgram_connect, unix_dgram_connect,
       * netlink_connect: AF_UNSPEC dissolves the association. */
      airlock_sa_init_effect (&sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
      break;

    case AF_INET:
      /* net/ipv4/tcp_ipv4.c tcp_v4_connect, net/ipv4/datagram.c
       * __ip4_datagram_connect: addr_len < sizeof (struct sockaddr_in) is
       * EINVAL. */
      if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len, error))
        return FALSE;
      airlock_sa_read_in (&sa, bytes, len);
      break;

    case AF_INET6:
      /* tcp_v6_connect, __ip6_datagram_connect: addr_len <
       * SIN6_LEN_RFC2133 (24) is EINVAL. */
      if (!airlock_sa_min_len (what, "an RFC 2133 struct sockaddr_in6", SOCKADDR_IN6_LEN_RFC2133,
                               "EINVAL", len, error))
        return FALSE;
      airlock_sa_read_in6 (&sa, bytes, len);
      break;

    case AF_UNIX:
      /* The lone family is the unnamed address (see sockaddr.h). */
      if (len != SOCKADDR_FAMILY_LEN && !airlock_sa_unix_name (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_un (&sa, bytes, len);
      break;

    case AF_NETLINK:
      /* net/netlink/af_netlink.c netlink_connect */
      if (!airlock_sa_min_len (what, "struct sockaddr_nl", SOCKADDR_NL_LEN, "EINVAL", len, error))
        return FALSE;
      airlock_sa_read_nl (&sa, bytes, len);
      break;

    case AF_PACKET:
      /* Packet sockets cannot connect (sock_no_connect): read it as
       * sendto() would. */
      if (!airlock_sa_packet_send ("sendto()", bytes, len, error))
        return FALSE;
      airlock_sa_read_ll (&sa, bytes, len);
      break;

    case AF_VSOCK:
      if (!airlock_sa_vsock (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_vm (&sa, bytes, len);
      break;

    default:
      /* Unknown to us: the raw bytes are the record. */
      airlock_sa_init (&sa, AIRLOCK_SOCKADDR_ADDRESS, family, bytes, len);
      break;
    }

  *ret = sa;
  return TRUE;
}

/* ---- text ---- */

static void
append_escaped (GString *out, const guint8 *data, gsize len)
{
  g_autofree char *escaped = airlock_evidence_escape_bytes (data, len);

  g_string_append (out, escaped);
}

/* The address, with the v4-mapped note only when @for_humans. */
static void
append_address (GString *out, const AirlockSockaddr *sa, gboolean for_humans)
{
  char text[INET6_ADDRSTRLEN];

  switch (sa->effect)
    {
    case AIRLOCK_SOCKADDR_DISCONNECT:
      g_string_append (out, "(disconnect)");
      return;
    case AIRLOCK_SOCKADDR_NO_ADDRESS:
      g_string_append (out, "(connected peer)");
      return;
    case AIRLOCK_SOCKADDR_ADDRESS:
    default:
      break;
    }

  switch (sa->family)
    {
    case AF_INET:
    case AF_INET6:
      if (sa->inet.is_v4)
        {
          inet_ntop (AF_INET, sa->inet.v4, text, sizeof text);
          g_string_append_printf (out, "%s:%u", text, sa->inet.port);
          break;
        }
      inet_ntop (AF_INET6, sa->inet.addr, text, sizeof text);
      g_string_append_printf (out, "[%s", text);
      /* Zero means "no scope": the kernel ignores it (tcp_v6_connect). */
      if (sa->inet.scope_id != 0)
        g_string_append_printf (out, "%%%u", sa->inet.scope_id);
      g_string_append_printf (out, "]:%u", sa->inet.port);
      if (for_humans && sa->inet.v4_mapped)
        {
          inet_ntop (AF_INET, sa->inet.v4, text, sizeof text);
          g_string_append_printf (out, " (v4-mapped %s)", text);
        }
      break;

    case AF_UNIX:
      g_string_append (out, "unix:");
      if (sa->un.unnamed)
        g_string_append (out, "(unnamed)");
      else if (sa->un.abstract)
        {
          g_string_append_c (out, '@');
          append_escaped (out, sa->un.path, sa->un.path_len);
        }
      else
        {
          /* A filesystem name starting with '@' or '(' must not read like
           * an abstract or unnamed address: that first byte is written as
           * "\x40" / "\x28", the way the escaper writes control bytes.
           * The escaper writes '@' and '(' as themselves and a backslash as
           * "\\", so the text still maps back to exactly one name. */
          const guint8 *path = sa->un.path;
          gsize path_len = sa->un.path_len;

          if (path_len > 0 && (path[0] == '@' || path[0] == '('))
            {
              g_string_append_printf (out, "\\x%02x", path[0]);
              path++;
              path_len--;
            }
          append_escaped (out, path, path_len);
        }
      break;

    case AF_NETLINK:
      g_string_append_printf (out, "netlink:pid=%u,groups=0x%x", sa->nl.pid, sa->nl.groups);
      break;

    case AF_PACKET:
      g_string_append_printf (out, "packet:ifindex=%d,protocol=0x%04x,hatype=%u,pkttype=%u,addr=",
                              sa->ll.ifindex, sa->ll.protocol, sa->ll.hatype, sa->ll.pkttype);
      for (guint i = 0; i < MIN ((gsize) sa->ll.halen, sa->len - SOCKADDR_LL_ADDR_OFFSET); i++)
        g_string_append_printf (out, i == 0 ? "%02x" : ":%02x", sa->ll.addr[i]);
      break;

    case AF_VSOCK:
      g_string_append_printf (out, "vsock:%u:%u", sa->vm.cid, sa->vm.port);
      if (sa->vm.flags != 0)
        g_string_append_printf (out, ",flags=0x%x", sa->vm.flags);
      break;

    default:
      g_string_append_printf (out, "family-%u:", sa->family);
      for (gsize i = SOCKADDR_FAMILY_LEN; i < sa->len; i++)
        g_string_append_printf (out, "%02x", sa->bytes[i]);
      break;
    }
}

char *
airlock_sockaddr_to_string (const AirlockSockaddr *sa)
{
  GString *out;

  g_return_val_if_fail (sa != NULL, NULL);

  out = g_string_new (NULL);
  if (sa->effect == AIRLOCK_SOCKADDR_DISCONNECT)
    g_string_append (out, "unspec ");
  append_address (out, sa, TRUE);
  return g_string_free (out, FALSE);
}

static char *
socket_type_to_string (int family, int type)
{
  type &= SOCKADDR_SOCK_TYPE_MASK;
  /* net/unix/af_unix.c unix_create(): a unix SOCK_RAW is a SOCK_DGRAM. */
  if (family == AF_UNIX && type == SOCK_RAW)
    type = SOCK_DGRAM;

  switch (type)
    {
    case SOCK_STREAM:
      return g_strdup ("stream");
    case SOCK_DGRAM:
      return g_strdup ("dgram");
    case SOCK_RAW:
      return g_strdup ("raw");
    case SOCK_RDM:
      return g_strdup ("rdm");
    case SOCK_SEQPACKET:
      return g_strdup ("seqpacket");
    case SOCK_DCCP:
      return g_strdup ("dccp");
    case SOCK_PACKET:
      return g_strdup ("packet");
    default:
      return g_strdup_printf ("type-%d", type);
    }
}

static char *
socket_protocol_to_string (int family, int type, int protocol)
{
  type &= SOCKADDR_SOCK_TYPE_MASK;
  if (family != AF_INET && family != AF_INET6)
    return g_strdup_printf ("%d", protocol);

  /* inet_create() / inet6_create(): protocol 0 takes the type's default,
   * so (stream, 0) and (stream, tcp) are the same socket. */
  if (protocol == 0 && type == SOCK_STREAM)
    protocol = IPPROTO_TCP;
  else if (protocol == 0 && type == SOCK_DGRAM)
    protocol = IPPROTO_UDP;

  switch (protocol)
    {
    case IPPROTO_TCP:
      return g_strdup ("tcp");
    case IPPROTO_UDP:
      return g_strdup ("udp");
    case IPPROTO_ICMP:
      return g_strdup ("icmp");
    case IPPROTO_ICMPV6:
      return g_strdup ("icmpv6");
    case IPPROTO_SCTP:
      return g_strdup ("sctp");
    case IPPROTO_UDPLITE:
      return g_strdup ("udplite");
    case IPPROTO_MPTCP:
      return g_strdup ("mptcp");
    case IPPROTO_RAW:
      return g_strdup ("raw");
    default:
      return g_strdup_printf ("%d", protocol);
    }
}

char *
airlock_socket_triple_to_string (int family, int type, int protocol)
{
  g_autofree char *family_name = airlock_socket_family_to_string (family);
  g_autofree char *type_name = socket_type_to_string (family, type);
  g_autofree char *protocol_name = socket_protocol_to_string (family, type, protocol);

  return g_strdup_printf ("%s/%s/%s", family_name, type_name, protocol_name);
}

char *
airlock_attempt_key (int family, int type, int protocol, const AirlockSockaddr *sa)
{
  g_autofree char *triple = NULL;
  GString *out;

  g_return_val_if_fail (sa != NULL, NULL);

  /* The socket triple has no spaces; the address comes last, so whatever
   * bytes it holds (escaped) cannot shift the fields before it. */
  triple = airlock_socket_triple_to_string (family, type, protocol);
  out = g_string_new (NULL);
  g_string_append_printf (out, "%s ", triple);
  append_address (out, sa, FALSE);
  return g_string_free (out, FALSE);
}

const char *
airlock_inet_protocol_name (int protocol, int type)
{
  switch (protocol)
    {
    case IPPROTO_TCP:
      return "tcp";
    case IPPROTO_UDP:
      return "udp";
    case IPPROTO_ICMP:
      return "icmp";
    case IPPROTO_ICMPV6:
      return "icmpv6";
    case 0:
      return (type & 0xf) == SOCK_STREAM ? "tcp" : (type & 0xf) == SOCK_DGRAM ? "udp" : NULL;
    default:
      return NULL;
    }
}

char *
airlock_sockaddr_inet_address (const AirlockSockaddr *sa)
{
  g_autofree char *text = NULL;

  if (sa->effect != AIRLOCK_SOCKADDR_ADDRESS || (sa->family != AF_INET && sa->family != AF_INET6))
    return NULL;
  /* "192.0.2.1:80" / "[2001:db8::1%2]:53" → the address alone. */
  text = airlock_sockaddr_to_string (sa);
  if (text[0] == '[')
    return g_strndup (text + 1, strcspn (text + 1, "]%"));
  return g_strndup (text, strcspn (text, ":"));
}
