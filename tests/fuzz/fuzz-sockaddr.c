/* libFuzzer harness for the sockaddr decoders (lib/evidence/sockaddr*.c).
 *
 * The input picks a socket and a call (see fuzz-sockaddr.h) and carries
 * the sockaddr bytes.  Both decoders run on them; besides the sanitizers'
 * findings, the harness aborts when an invariant breaks:
 *   - a decode either succeeds or sets an AIRLOCK_SOCKADDR_ERROR with a
 *     printable message, and a failed decode leaves its result untouched;
 *   - a success keeps exactly the bytes the kernel would take (at most
 *     128, the input's own) and its fields are those bytes: ports, IPv4
 *     and IPv6 addresses, scope id only from 28 bytes on, v4-mapped,
 *     unix names up to the first NUL or abstract to the end;
 *   - the text and the attempt key are valid UTF-8 without control
 *     characters, deterministic, and the key differs for TCP and UDP;
 *   - the key is injective on what names a destination: changing any one
 *     byte of the port, address, scope id or unix name changes the key;
 *   - the family-driven decoder agrees with the socket-aware one on a
 *     socket of the address's own family (connect; bind for unix). */
#include "config.h"

#include "evidence/sockaddr.h"

#include "fuzz-sockaddr.h"
#include "fuzz-util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Runs one decode with a poisoned result and checks the error contract. */
static gboolean
run_decode (gboolean socket_aware, int family, int type, int protocol, AirlockSockaddrCall call,
            const guint8 *bytes, gsize len, AirlockSockaddr *ret)
{
  AirlockSockaddr before;
  GError *error = NULL;
  gboolean ok;

  /* memcpy, not assignment: padding bytes must compare equal too */
  memset (ret, 0x5a, sizeof *ret);
  memcpy (&before, ret, sizeof before);
  if (socket_aware)
    ok = airlock_sockaddr_decode_for_socket (family, type, protocol, call, bytes, len, ret,
                                             &error);
  else
    ok = airlock_sockaddr_decode (bytes, len, ret, &error);

  if (ok)
    {
      fuzz_check (error == NULL);
      return TRUE;
    }
  fuzz_check (error != NULL);
  fuzz_check (error->domain == AIRLOCK_SOCKADDR_ERROR);
  fuzz_check (error->code >= AIRLOCK_SOCKADDR_ERROR_TOO_LONG
              && error->code <= AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED);
  fuzz_check_safe_text (error->message);
  fuzz_check (error->message[0] != '\0');
  fuzz_check (memcmp (ret, &before, sizeof before) == 0);
  g_error_free (error);
  return FALSE;
}

static guint16
le16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint16
be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

/* The fields are the bytes. */
static void
check_fields (const AirlockSockaddr *sa, const guint8 *bytes, gsize len)
{
  static const guint8 zeros[AIRLOCK_SOCKADDR_MAX] = { 0 };

  fuzz_check (sa->len <= AIRLOCK_SOCKADDR_MAX);
  fuzz_check (sa->len <= len);
  fuzz_check (sa->len == 0 || memcmp (sa->bytes, bytes, sa->len) == 0);
  fuzz_check (memcmp (sa->bytes + sa->len, zeros, AIRLOCK_SOCKADDR_MAX - sa->len) == 0);
  fuzz_check (sa->family_field == (sa->len >= 2 ? le16 (bytes) : 0));

  if (sa->effect != AIRLOCK_SOCKADDR_ADDRESS)
    {
      fuzz_check (sa->effect == AIRLOCK_SOCKADDR_DISCONNECT
                  || sa->effect == AIRLOCK_SOCKADDR_NO_ADDRESS);
      fuzz_check (sa->family == AF_UNSPEC);
      return;
    }

  switch (sa->family)
    {
    case AF_INET:
    case AF_INET6:
      fuzz_check (sa->len >= 16);
      fuzz_check (sa->inet.port == be16 (bytes + 2));
      if (sa->inet.is_v4)
        {
          fuzz_check (memcmp (sa->inet.v4, bytes + 4, 4) == 0);
          fuzz_check (!sa->inet.has_scope_id && !sa->inet.v4_mapped);
          break;
        }
      fuzz_check (sa->family == AF_INET6);
      fuzz_check (sa->len >= 24);
      fuzz_check (memcmp (sa->inet.addr, bytes + 8, 16) == 0);
      fuzz_check (sa->inet.has_scope_id == (sa->len >= 28));
      if (!sa->inet.has_scope_id)
        fuzz_check (sa->inet.scope_id == 0);
      fuzz_check (sa->inet.v4_mapped
                  == (memcmp (bytes + 8, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0));
      if (sa->inet.v4_mapped)
        fuzz_check (memcmp (sa->inet.v4, bytes + 20, 4) == 0);
      break;

    case AF_UNIX:
      fuzz_check (sa->len >= 2 && sa->len <= 110);
      fuzz_check (sa->family_field == AF_UNIX);
      fuzz_check (sa->un.path_len <= AIRLOCK_SOCKADDR_UNIX_PATH_MAX);
      if (sa->len == 2)
        {
          fuzz_check (sa->un.unnamed && sa->un.path_len == 0);
          break;
        }
      fuzz_check (!sa->un.unnamed);
      fuzz_check (sa->un.abstract == (bytes[2] == 0));
      if (sa->un.abstract)
        {
          fuzz_check (sa->un.path_len == sa->len - 3);
          fuzz_check (memcmp (sa->un.path, bytes + 3, sa->un.path_len) == 0);
          break;
        }
      fuzz_check (sa->un.path_len >= 1);
      fuzz_check (memchr (sa->un.path, 0, sa->un.path_len) == NULL);
      fuzz_check (memcmp (sa->un.path, bytes + 2, sa->un.path_len) == 0);
      fuzz_check (sa->un.unterminated == (sa->un.path_len == sa->len - 2));
      break;

    case AF_NETLINK:
      fuzz_check (sa->len >= 12 && sa->family_field == AF_NETLINK);
      break;

    case AF_PACKET:
      fuzz_check (sa->len >= 20);
      fuzz_check (sa->ll.halen == bytes[11]);
      fuzz_check (sa->ll.protocol == be16 (bytes + 2));
      break;

    case AF_VSOCK:
      fuzz_check (sa->len >= 16 && sa->family_field == AF_VSOCK);
      fuzz_check ((sa->vm.flags & ~1u) == 0);
      break;

    default:
      fuzz_check (sa->family == sa->family_field);
      break;
    }
}

static char *
key_of (int family, int type, int protocol, const AirlockSockaddr *sa)
{
  char *key = airlock_attempt_key (family, type, protocol, sa);

  fuzz_check_safe_text (key);
  fuzz_check (key[0] != '\0');
  fuzz_check (strchr (key, '\n') == NULL);
  return key;
}

static void
check_text (const AirlockSockaddr *sa, int family, int type, int protocol)
{
  g_autofree char *text = airlock_sockaddr_to_string (sa);
  g_autofree char *text2 = airlock_sockaddr_to_string (sa);
  g_autofree char *tcp = key_of (family, SOCK_STREAM, 0, sa);
  g_autofree char *tcp2 = key_of (family, SOCK_STREAM, IPPROTO_IP, sa);
  g_autofree char *udp = key_of (family, SOCK_DGRAM, 0, sa);
  g_autofree char *own = key_of (family, type, protocol, sa);

  fuzz_check_safe_text (text);
  fuzz_check (text[0] != '\0');
  fuzz_check (strcmp (text, text2) == 0);
  fuzz_check (strcmp (tcp, tcp2) == 0);
  fuzz_check (strcmp (tcp, udp) != 0);
  (void) own;
}

/* The byte range that names the destination, or FALSE when there is none
 * to check. */
static gboolean
significant_range (const AirlockSockaddr *sa, gsize *ret_start, gsize *ret_end)
{
  if (sa->effect != AIRLOCK_SOCKADDR_ADDRESS)
    return FALSE;
  switch (sa->family)
    {
    case AF_INET:
      if (!sa->inet.is_v4)
        return FALSE;
      *ret_start = 2;   /* port and address */
      *ret_end = 8;
      return TRUE;
    case AF_INET6:
      if (sa->inet.is_v4)
        return FALSE;
      *ret_start = 2;   /* port … address … scope id; skip flowinfo below */
      *ret_end = sa->inet.has_scope_id ? 28 : 24;
      return TRUE;
    case AF_UNIX:
      if (sa->un.unnamed)
        return FALSE;
      *ret_start = 2;
      *ret_end = sa->un.abstract ? sa->len : 2 + sa->un.path_len;
      return TRUE;
    default:
      return FALSE;
    }
}

/* Changing one byte that names the destination changes the key. */
static void
check_key_injective (const AirlockSockaddr *sa, const guint8 *bytes, gsize len, guint64 h)
{
  guint8 mutated[AIRLOCK_SOCKADDR_MAX];
  AirlockSockaddr other;
  gsize start, end, at;
  g_autofree char *key = NULL;
  g_autofree char *other_key = NULL;

  if (!significant_range (sa, &start, &end) || end <= start)
    return;
  at = start + (gsize) (h % (end - start));
  if (sa->family == AF_INET6 && at >= 4 && at < 8)
    at += 4;            /* flowinfo is not part of the destination */
  if (at >= end)
    return;

  memcpy (mutated, bytes, sa->len);
  mutated[at] ^= (guint8) (1 + (h >> 8) % 255);
  if (!run_decode (FALSE, 0, 0, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, mutated, sa->len, &other))
    return;
  if (other.effect != AIRLOCK_SOCKADDR_ADDRESS || other.family != sa->family)
    return;
  key = key_of (sa->family, SOCK_STREAM, 0, sa);
  other_key = key_of (sa->family, SOCK_STREAM, 0, &other);
  fuzz_check (strcmp (key, other_key) != 0);
}

static int
pick (const int *table, gsize n, guint8 selector)
{
  int value = table[selector % n];

  return value == FUZZ_SOCKADDR_SELF ? selector : value;
}

/* The family-driven decoder is connect() on a socket of the address's own
 * family (bind() for unix, where it also takes the unnamed address). */
static void
check_agrees_with_own_socket (const guint8 *bytes, gsize len, gboolean generic_ok,
                              const AirlockSockaddr *generic)
{
  AirlockSockaddr sa;
  AirlockSockaddrCall call = AIRLOCK_SOCKADDR_CALL_CONNECT;
  int type = SOCK_STREAM;
  gboolean ok;

  if (len < 2 || len > AIRLOCK_SOCKADDR_MAX)
    return;
  switch (le16 (bytes))
    {
    case AF_INET:
    case AF_INET6:
    case AF_VSOCK:
      break;
    case AF_NETLINK:
      type = SOCK_RAW;
      break;
    case AF_UNIX:
      call = AIRLOCK_SOCKADDR_CALL_BIND;
      break;
    default:
      return;
    }
  ok = run_decode (TRUE, le16 (bytes), type, 0, call, bytes, len, &sa);
  fuzz_check (ok == generic_ok);
  if (ok)
    fuzz_check (memcmp (&sa, generic, sizeof sa) == 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const guint8 *bytes = data + FUZZ_SOCKADDR_HEADER;
  guint64 h = fuzz_input_hash (data, size);
  AirlockSockaddr sa, generic;
  AirlockSockaddrCall call;
  int family, type, protocol;
  gsize len;
  gboolean generic_ok;

  if (size < FUZZ_SOCKADDR_HEADER)
    return 0;
  len = size - FUZZ_SOCKADDR_HEADER;
  call = (AirlockSockaddrCall) (data[0] % 4);
  family = pick (fuzz_sockaddr_families, FUZZ_N_ELEMENTS (fuzz_sockaddr_families), data[1]);
  type = pick (fuzz_sockaddr_types, FUZZ_N_ELEMENTS (fuzz_sockaddr_types), data[2] & 0x7f);
  if (data[2] & 0x80)
    type |= SOCK_NONBLOCK;
  protocol = pick (fuzz_sockaddr_protocols, FUZZ_N_ELEMENTS (fuzz_sockaddr_protocols), data[3]);

  /* Copied so ASan sees the exact extent of the sockaddr. */
  {
    g_autofree guint8 *copy = g_memdup2 (bytes, len);

    generic_ok = run_decode (FALSE, 0, 0, 0, AIRLOCK_SOCKADDR_CALL_CONNECT, copy, len, &generic);
    if (generic_ok)
      {
        fuzz_check (generic.len == len);
        check_fields (&generic, copy, len);
        check_text (&generic, generic.family, type, protocol);
        check_key_injective (&generic, copy, len, h);
      }
    check_agrees_with_own_socket (copy, len, generic_ok, &generic);

    if (run_decode (TRUE, family, type, protocol, call, copy, len, &sa))
      {
        fuzz_check (sa.len == MIN (len, (gsize) AIRLOCK_SOCKADDR_MAX));
        check_fields (&sa, copy, len);
        check_text (&sa, family, type, protocol);
      }
  }
  return 0;
}
