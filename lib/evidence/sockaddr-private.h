/* Internals shared by the two halves of the sockaddr decoder: sockaddr.c
 * (address layouts, the family-driven decoder, text) and sockaddr-socket.c
 * (what each socket type accepts in each call). */
#pragma once

#include "sockaddr.h"

G_BEGIN_DECLS

/* Sizes the kernel compares address lengths with (checked against this
 * host's headers in sockaddr.c: they describe the guests' ABI too). */
#define SOCKADDR_FAMILY_LEN 2                     /* offsetofend (struct sockaddr, sa_family) */
#define SOCKADDR_IN_LEN 16                        /* sizeof (struct sockaddr_in) */
#define SOCKADDR_IN6_LEN_RFC2133 24               /* SIN6_LEN_RFC2133: no sin6_scope_id */
#define SOCKADDR_IN6_LEN 28                       /* sizeof (struct sockaddr_in6) */
#define SOCKADDR_UN_LEN 110                       /* sizeof (struct sockaddr_un) */
#define SOCKADDR_NL_LEN 12                        /* sizeof (struct sockaddr_nl) */
#define SOCKADDR_LL_LEN 20                        /* sizeof (struct sockaddr_ll) */
#define SOCKADDR_LL_ADDR_OFFSET 12                /* offsetof (struct sockaddr_ll, sll_addr) */
#define SOCKADDR_VM_LEN 16                        /* sizeof (struct sockaddr_vm) */
#define SOCKADDR_SOCK_TYPE_MASK 0xf               /* SOCK_TYPE_MASK, include/linux/net.h */

/* Native-endian fields: both guest arches are little-endian (sockaddr.h). */
static inline guint16
sockaddr_get_le16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static inline guint32
sockaddr_get_le32 (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16)
         | ((guint32) p[3] << 24);
}

static inline guint16
sockaddr_get_be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

static inline guint32
sockaddr_get_be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8)
         | (guint32) p[3];
}

/* Sets @error (AIRLOCK_SOCKADDR_ERROR, @code) and returns FALSE, so that
 * refusals read `return airlock_sa_error (…)`. */
gboolean airlock_sa_error (GError **error, AirlockSockaddrError code, const char *format,
                           ...) G_GNUC_PRINTF (3, 4);

/* Clears @sa and records the first @len bytes (at most
 * AIRLOCK_SOCKADDR_MAX) with @effect and @family. */
void airlock_sa_init (AirlockSockaddr *sa, AirlockSockaddrEffect effect, guint16 family,
                      const guint8 *bytes, gsize len);
/* A DISCONNECT or NO_ADDRESS result over @len bytes. */
void airlock_sa_init_effect (AirlockSockaddr *sa, AirlockSockaddrEffect effect, const guint8 *bytes,
                             gsize len);

/* Readers, one per layout.  Each asserts the minimum length its layout
 * needs: callers check it first, with the kernel's error. */
void airlock_sa_read_in (AirlockSockaddr *sa, const guint8 *bytes, gsize len);
void airlock_sa_read_in6 (AirlockSockaddr *sa, const guint8 *bytes, gsize len);
void airlock_sa_read_un (AirlockSockaddr *sa, const guint8 *bytes, gsize len);
void airlock_sa_read_nl (AirlockSockaddr *sa, const guint8 *bytes, gsize len);
void airlock_sa_read_ll (AirlockSockaddr *sa, const guint8 *bytes, gsize len);
void airlock_sa_read_vm (AirlockSockaddr *sa, const guint8 *bytes, gsize len);

/* Checks shared by several sockets.  @what names the call ("connect()");
 * each returns FALSE with @error set when the kernel would refuse. */
gboolean airlock_sa_has_family (const char *what, gsize len, GError **error);
gboolean airlock_sa_min_len (const char *what, const char *layout, gsize min,
                             const char *errno_name, gsize len, GError **error);
/* Always returns FALSE: sa_family @family is not @expected. */
gboolean airlock_sa_wrong_family (const char *what, guint family, const char *expected,
                                  const char *errno_name, GError **error);
gboolean airlock_sa_unix_name (const char *what, const guint8 *bytes, gsize len, GError **error);
gboolean airlock_sa_vsock (const char *what, const guint8 *bytes, gsize len, GError **error);
gboolean airlock_sa_packet_send (const char *what, const guint8 *bytes, gsize len, GError **error);

G_END_DECLS
