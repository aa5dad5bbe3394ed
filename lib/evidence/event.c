/* The supervisor's records, decoded on the host (see event.h): the log,
 * one event per EVENT frame, RESULTs attached to their calls.  The names of
 * the kernel's numbers are abi-names.c's; an event as text, event-text.c's. */
#include "config.h"

#include "event.h"
#include "event-private.h"

#include "abi-names.h"
#include "frame-private.h"

#include "wire.h"

#include <string.h>
#include <sys/socket.h>

G_DEFINE_QUARK (airlock-event-error-quark, airlock_event_error)

/* include/linux/socket.h */
#define MSG_FASTOPEN_ 0x20000000u

/* ---- the log ---- */

/* Every record of a process repeats its exe and argv, and most of a
 * workload's records name one of a few addresses: decoding (escaping,
 * splitting, copying) each distinct value once rather than once per
 * record is most of what an event costs.  The values are remembered in
 * direct-mapped caches: one slot per hash of the guest's bytes, compared
 * byte for byte, a miss replacing the slot.  Not a hash table: the bytes
 * are the guest's, and a table keyed on them could be flooded with
 * colliding values, where this does one hash and one comparison of a
 * bounded TLV per field, whatever the bytes. */
#define GUEST_CACHE_SLOTS 64     /* exe, path, note; argv, exec-argv */
#define ADDR_CACHE_SLOTS 256     /* the addresses a workload talks to */
#define SOCKADDR_CACHE_SLOTS 256 /* the same, decoded */

/* Events are made EVENT_SLAB at a time: one allocation for many records
 * instead of one each.  An event lives as long as its log, so no slab is
 * freed before the log is.  Decoded addresses likewise, SOCKADDR_SLAB at a
 * time. */
#define EVENT_SLAB 64
#define SOCKADDR_SLAB 64

typedef struct {
  guint8 *raw;         /* a copy of the guest's bytes; NULL for an empty slot */
  gsize raw_len;
  gpointer value;      /* what they decode to (owned by the log) */
} GuestCacheSlot;

typedef struct {
  GuestCacheSlot slot[GUEST_CACHE_SLOTS];
} GuestCache;

struct _AirlockEventLog {
  gint ref_count;           /* a run record shares the log with the VM that made it */
  GPtrArray *events;        /* AirlockEvent *, seq order (strictly increasing) */
  GHashTable *mmsg_groups;  /* &first->seq → GPtrArray of its entries (borrowed) */
  GHashTable *mmsg_open;    /* tid → last entry of the sendmmsg under way in that thread */
  GHashTable *tcp_dns;      /* guint64 * sock id → AirlockDnsTcpStream * */
  gboolean have_last_seq;
  guint64 last_seq;
  guint32 phase;            /* of the last WORKLOAD_START (0 before any) */

  /* What the events point to and share: escaped strings (exe, path, note,
   * unknown syscall names) and argument vectors, each made once. */
  GPtrArray *strings;       /* char * */
  GPtrArray *strvs;         /* GStrv */
  GuestCache string_cache;  /* values in strings */
  GuestCache strv_cache;    /* values in strvs */
  /* Exactly-sized copies of ADDR, PEER and LOCAL values (one reference
   * each; the events hold their own). */
  GBytes *addr_cache[ADDR_CACHE_SLOTS];

  GPtrArray *slabs;         /* AirlockEvent[EVENT_SLAB] each, the last one being filled */
  guint slab_used;          /* events taken from the last slab */

  /* Decoded addresses (280 bytes each), one copy per value seen recently:
   * events point at them (AirlockEvent.addr_sa, peer_sa, local_sa). */
  const AirlockSockaddr *sockaddr_cache[SOCKADDR_CACHE_SLOTS];
  GPtrArray *sockaddr_slabs;  /* AirlockSockaddr[SOCKADDR_SLAB] each */
  guint sockaddr_slab_used;
};

/* The dns array of every event that completed no DNS message: one empty
 * array for the process, never changed (decode_dns gives an event its own
 * before adding to it) and never freed. */
static GPtrArray *
no_dns (void)
{
  static gsize empty = 0;

  if (g_once_init_enter (&empty))
    g_once_init_leave (&empty, (gsize) g_ptr_array_new ());
  return (GPtrArray *) empty;
}

/* Spreads values over the cache slots, a word at a time (a byte at a time
 * for the tail).  It needs no key: a collision only costs a miss, and a
 * miss costs what decoding without a cache would. */
static guint32
guest_bytes_hash (const guint8 *data, gsize len)
{
  guint64 hash = 0x9e3779b97f4a7c15ull ^ len;
  gsize i = 0;

  for (; i + 8 <= len; i += 8)
    {
      guint64 word;

      memcpy (&word, data + i, sizeof word);
      hash = (hash ^ word) * 0x100000001b3ull;
      hash ^= hash >> 29;
    }
  for (; i < len; i++)
    hash = (hash ^ data[i]) * 0x100000001b3ull;
  hash ^= hash >> 32;
  return (guint32) hash;
}

static void
guest_cache_clear (GuestCache *cache)
{
  for (guint i = 0; i < GUEST_CACHE_SLOTS; i++)
    g_clear_pointer (&cache->slot[i].raw, g_free);
}

/* The slot for @data (@len bytes), and in @ret_value what it holds for
 * them, or NULL. */
static GuestCacheSlot *
guest_cache_lookup (GuestCache *cache, const guint8 *data, gsize len, gpointer *ret_value)
{
  GuestCacheSlot *slot = &cache->slot[guest_bytes_hash (data, len) % GUEST_CACHE_SLOTS];

  *ret_value = slot->raw != NULL && slot->raw_len == len
                   && (len == 0 || memcmp (slot->raw, data, len) == 0)
                 ? slot->value
                 : NULL;
  return slot;
}

static void
guest_cache_slot_set (GuestCacheSlot *slot, const guint8 *data, gsize len, gpointer value)
{
  g_free (slot->raw);
  /* One byte more, so a copy of 0 bytes is not NULL (an empty slot). */
  slot->raw = g_malloc (len + 1);
  if (len > 0)
    memcpy (slot->raw, data, len);
  slot->raw_len = len;
  slot->value = value;
}

static void
event_clear (gpointer data)
{
  AirlockEvent *ev = data;

  /* syscall_name, exe, argv, exec_argv, path and note belong to the log. */
  g_clear_pointer (&ev->addr, g_bytes_unref);
  g_free (ev->addr_error);
  g_clear_pointer (&ev->peer, g_bytes_unref);
  g_free (ev->peer_error);
  g_clear_pointer (&ev->local, g_bytes_unref);
  g_clear_pointer (&ev->payload, g_bytes_unref);
  if (ev->dns != no_dns ())
    g_ptr_array_unref (ev->dns);
  /* The event itself belongs to a slab of the log (log_event_new). */
}

/* The log's copy of @sa: the one it already holds when the last address
 * decoded into the same cache slot was the same, a new one otherwise.  A
 * workload talks to few destinations, and keeping three decoded addresses
 * inside every event made an event 1288 bytes, most of the memory (and of
 * the page faults) a long run's log cost. */
static const AirlockSockaddr *
log_sockaddr (AirlockEventLog *log, const AirlockSockaddr *sa)
{
  guint32 slot = guest_bytes_hash ((const guint8 *) sa, sizeof *sa) % SOCKADDR_CACHE_SLOTS;
  const AirlockSockaddr *cached = log->sockaddr_cache[slot];
  AirlockSockaddr *slab;
  AirlockSockaddr *copy;

  if (cached && memcmp (cached, sa, sizeof *sa) == 0)
    return cached;
  if (log->sockaddr_slabs->len == 0 || log->sockaddr_slab_used == SOCKADDR_SLAB)
    {
      g_ptr_array_add (log->sockaddr_slabs, g_new (AirlockSockaddr, SOCKADDR_SLAB));
      log->sockaddr_slab_used = 0;
    }
  slab = log->sockaddr_slabs->pdata[log->sockaddr_slabs->len - 1];
  copy = &slab[log->sockaddr_slab_used++];
  memcpy (copy, sa, sizeof *sa);
  log->sockaddr_cache[slot] = copy;
  return copy;
}

/* A zeroed event, from the log's last slab (or a new one).  An event is
 * ~450 bytes the decoder writes while the slab is cold in the cache: each
 * is zeroed when it is handed out, and the next one is prefetched for
 * writing, so its cache misses overlap with decoding this one instead of
 * stalling the next. */
static AirlockEvent *
log_event_new (AirlockEventLog *log)
{
  AirlockEvent *slab;
  AirlockEvent *ev;

  if (log->slabs->len == 0 || log->slab_used == EVENT_SLAB)
    {
      g_ptr_array_add (log->slabs, g_new (AirlockEvent, EVENT_SLAB));
      log->slab_used = 0;
    }
  slab = log->slabs->pdata[log->slabs->len - 1];
  ev = &slab[log->slab_used++];
  memset (ev, 0, sizeof *ev);
  if (log->slab_used < EVENT_SLAB)
    for (gsize off = 0; off < sizeof *ev; off += 64)
      __builtin_prefetch ((const guint8 *) (ev + 1) + off, 1, 3);
  return ev;
}

AirlockEventLog *
airlock_event_log_new (void)
{
  AirlockEventLog *log = g_new0 (AirlockEventLog, 1);

  log->ref_count = 1;
  log->events = g_ptr_array_new_with_free_func (event_clear);
  log->slabs = g_ptr_array_new_with_free_func (g_free);
  log->sockaddr_slabs = g_ptr_array_new_with_free_func (g_free);
  log->mmsg_groups = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                            (GDestroyNotify) g_ptr_array_unref);
  log->mmsg_open = g_hash_table_new (g_direct_hash, g_direct_equal);
  log->tcp_dns = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                        (GDestroyNotify) airlock_dns_tcp_stream_free);
  log->strings = g_ptr_array_new_with_free_func (g_free);
  log->strvs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  return log;
}

AirlockEventLog *
airlock_event_log_ref (AirlockEventLog *log)
{
  g_atomic_int_inc (&log->ref_count);
  return log;
}

void
airlock_event_log_free (AirlockEventLog *log)
{
  if (log == NULL || !g_atomic_int_dec_and_test (&log->ref_count))
    return;
  g_hash_table_unref (log->mmsg_groups);
  g_hash_table_unref (log->mmsg_open);
  g_hash_table_unref (log->tcp_dns);
  g_ptr_array_unref (log->events);
  g_ptr_array_unref (log->slabs);
  g_ptr_array_unref (log->sockaddr_slabs);
  guest_cache_clear (&log->string_cache);
  guest_cache_clear (&log->strv_cache);
  for (guint i = 0; i < ADDR_CACHE_SLOTS; i++)
    g_clear_pointer (&log->addr_cache[i], g_bytes_unref);
  g_ptr_array_unref (log->strings);
  g_ptr_array_unref (log->strvs);
  g_free (log);
}

GPtrArray *
airlock_event_log_get_events (AirlockEventLog *log)
{
  g_return_val_if_fail (log != NULL, NULL);
  return log->events;
}

/* The syscall event with frame sequence number @seq, or NULL.  The events
 * are in increasing seq order, so this is a search rather than a table
 * kept up to date for every event; a RESULT follows its call closely, so
 * the last few events are looked at first. */
static AirlockEvent *
log_find_syscall (AirlockEventLog *log, guint64 seq)
{
  AirlockEvent **events = (AirlockEvent **) log->events->pdata;
  guint lo = 0, hi = log->events->len;
  AirlockEvent *found = NULL;

  for (guint i = hi, tail = 0; i > 0 && tail < 8; i--, tail++)
    {
      if (events[i - 1]->seq == seq)
        {
          found = events[i - 1];
          break;
        }
      if (events[i - 1]->seq < seq)
        return NULL;
      hi = i - 1;
    }
  while (found == NULL && lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (events[mid]->seq == seq)
        found = events[mid];
      else if (events[mid]->seq < seq)
        lo = mid + 1;
      else
        hi = mid;
    }
  return found != NULL && found->kind == AIRLOCK_EVENT_SYSCALL ? found : NULL;
}

const AirlockEvent *
airlock_event_log_lookup (AirlockEventLog *log, guint64 seq)
{
  g_return_val_if_fail (log != NULL, NULL);
  return log_find_syscall (log, seq);
}

static GBytes *
tlv_bytes (const AirlockFrameTlvs *tlvs, guint tag)
{
  const AirlockTlv *tlv = &tlvs->tlv[tag];

  return tlvs->present[tag] ? g_bytes_new (tlv->value, tlv->len) : NULL;
}

/* Like tlv_bytes(), for the sockaddrs: an exactly-sized copy shared with
 * the earlier events that carried the same bytes (GBytes never change). */
static GBytes *
log_addr_bytes (AirlockEventLog *log, const AirlockFrameTlvs *tlvs, guint tag)
{
  const AirlockTlv *tlv = &tlvs->tlv[tag];
  GBytes **slot;

  if (!tlvs->present[tag])
    return NULL;
  slot = &log->addr_cache[guest_bytes_hash (tlv->value, tlv->len) % ADDR_CACHE_SLOTS];
  if (*slot != NULL)
    {
      gsize cached_len;
      const guint8 *cached = g_bytes_get_data (*slot, &cached_len);

      if (cached_len == tlv->len
          && (cached_len == 0 || memcmp (cached, tlv->value, cached_len) == 0))
        return g_bytes_ref (*slot);
      g_bytes_unref (*slot);
    }
  *slot = g_bytes_new (tlv->value, tlv->len);
  return g_bytes_ref (*slot);
}

/* wire_get_le64() in one load: the byte loop does not compile to one, and
 * an event reads seven of these. */
static inline guint64
le64_at (const guint8 *p)
{
  guint64 v;

  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_LE (v);
}

/* Integer TLVs: parse_tlvs() enforced their exact size (tlv_sizes), so
 * they are read in place; airlock_tlv_get_u32() would check it again. */
static inline gboolean
tlv_u32 (const AirlockFrameTlvs *tlvs, guint tag, guint32 *ret)
{
  if (!tlvs->present[tag])
    return FALSE;
  *ret = wire_get_le32 (tlvs->tlv[tag].value);
  return TRUE;
}

static inline gboolean
tlv_u64 (const AirlockFrameTlvs *tlvs, guint tag, guint64 *ret)
{
  if (!tlvs->present[tag])
    return FALSE;
  *ret = le64_at (tlvs->tlv[tag].value);
  return TRUE;
}

/* /proc/PID/cmdline: NUL-terminated arguments.  A final NUL ends the last
 * argument rather than starting an empty one; a cut-off last argument
 * (the supervisor copies at most 4096 bytes) is kept as it is. */
static GStrv
split_argv (const guint8 *data, gsize len)
{
  GPtrArray *out = g_ptr_array_new ();
  gsize start = 0;

  for (gsize i = 0; i <= len; i++)
    if (i == len || data[i] == '\0')
      {
        if (i == len && start == len)
          break;
        g_ptr_array_add (out, airlock_evidence_escape_bytes (data + start, i - start));
        start = i + 1;
      }
  g_ptr_array_add (out, NULL);
  return (GStrv) g_ptr_array_free (out, FALSE);
}

/* @tag's value escaped (airlock_evidence_escape_bytes()), or NULL when
 * absent.  Owned by the log. */
static char *
log_escaped (AirlockEventLog *log, const AirlockFrameTlvs *tlvs, guint tag)
{
  const AirlockTlv *tlv = &tlvs->tlv[tag];
  GuestCacheSlot *slot;
  char *value;

  if (!tlvs->present[tag])
    return NULL;
  slot = guest_cache_lookup (&log->string_cache, tlv->value, tlv->len, (gpointer *) &value);
  if (value == NULL)
    {
      value = airlock_evidence_escape_bytes (tlv->value, tlv->len);
      g_ptr_array_add (log->strings, value);
      guest_cache_slot_set (slot, tlv->value, tlv->len, value);
    }
  return value;
}

/* @tag's value split as an argv (split_argv()), or NULL when absent.
 * Owned by the log. */
static GStrv
log_argv (AirlockEventLog *log, const AirlockFrameTlvs *tlvs, guint tag)
{
  const AirlockTlv *tlv = &tlvs->tlv[tag];
  GuestCacheSlot *slot;
  GStrv value;

  if (!tlvs->present[tag])
    return NULL;
  slot = guest_cache_lookup (&log->strv_cache, tlv->value, tlv->len, (gpointer *) &value);
  if (value == NULL)
    {
      value = split_argv (tlv->value, tlv->len);
      g_ptr_array_add (log->strvs, value);
      guest_cache_slot_set (slot, tlv->value, tlv->len, value);
    }
  return value;
}

/* The name of a call under its ABI: static, or for a call the tables do
 * not name, owned by the log. */
static const char *
log_syscall_name (AirlockEventLog *log, guint32 audit_arch, guint32 nr)
{
  const char *name = airlock_syscall_known_name (audit_arch, nr);
  char *unknown;

  if (name)
    return name;
  unknown = airlock_syscall_unknown_name (audit_arch, nr);
  g_ptr_array_add (log->strings, unknown);
  return unknown;
}

static gboolean
syscall_is (const AirlockEvent *ev, const char *name)
{
  return ev->syscall_name != NULL && g_str_equal (ev->syscall_name, name);
}

static gboolean
is_stream (const AirlockEvent *ev)
{
  return ev->has_socket && (ev->sock_type & 0xf) == SOCK_STREAM;
}

gboolean
airlock_event_is_send (const AirlockEvent *ev)
{
  return syscall_is (ev, "sendto") || syscall_is (ev, "sendmsg") || syscall_is (ev, "sendmmsg")
         || syscall_is (ev, "send") || syscall_is (ev, "write") || syscall_is (ev, "writev")
         || syscall_is (ev, "pwritev") || syscall_is (ev, "pwritev2") || syscall_is (ev, "sendfile")
         || syscall_is (ev, "splice");
}

/* Decodes ADDR as the call reads it.  The supervisor sends
 * min(addrlen, 128) bytes; anything else means the bytes are not the
 * address the kernel saw, and the address is reported as not decoding. */
static void
decode_addr (AirlockEventLog *log, AirlockEvent *ev)
{
  gsize have = g_bytes_get_size (ev->addr);
  const guint8 *bytes = g_bytes_get_data (ev->addr, NULL);
  gsize len = ev->has_addrlen ? ev->addrlen : have;
  AirlockSockaddrCall call = AIRLOCK_SOCKADDR_CALL_CONNECT;
  gboolean fastopen = is_stream (ev) && ev->has_msg_flags && (ev->msg_flags & MSG_FASTOPEN_);
  g_autoptr (GError) error = NULL;
  AirlockSockaddr sa;

  /* Zeroed, padding too: log_sockaddr () compares whole structs. */
  memset (&sa, 0, sizeof sa);

  if (have != MIN (len, (gsize) AIRLOCK_SOCKADDR_MAX))
    {
      ev->addr_error = g_strdup_printf ("the record holds %" G_GSIZE_FORMAT " address bytes "
                                        "for an address length of %" G_GSIZE_FORMAT,
                                        have, len);
      return;
    }
  if (!ev->has_socket)
    {
      /* No socket to read it for: by its own family, as connect() would. */
      if (airlock_sockaddr_decode (bytes, len, &sa, &error))
        {
          ev->addr_sa = log_sockaddr (log, &sa);
          ev->addr_decoded = TRUE;
        }
      else
        ev->addr_error = g_strdup (error->message);
      return;
    }

  if (syscall_is (ev, "bind"))
    call = AIRLOCK_SOCKADDR_CALL_BIND;
  else if (syscall_is (ev, "sendto"))
    /* A TCP send with MSG_FASTOPEN connects to the address. */
    call = fastopen ? AIRLOCK_SOCKADDR_CALL_CONNECT : AIRLOCK_SOCKADDR_CALL_SENDTO;
  else if (syscall_is (ev, "sendmsg") || syscall_is (ev, "sendmmsg"))
    {
      call = AIRLOCK_SOCKADDR_CALL_SENDMSG;
      /* sendmsg clamps msg_namelen before TCP fast open connects to it,
       * and a 0 length is no address at all (net/socket.c). */
      if (fastopen && len > 0)
        {
          call = AIRLOCK_SOCKADDR_CALL_CONNECT;
          len = MIN (len, (gsize) AIRLOCK_SOCKADDR_MAX);
        }
    }
  if (airlock_sockaddr_decode_for_socket ((int) ev->sock_family, (int) ev->sock_type,
                                          (int) ev->sock_protocol, call, bytes, len,
                                          &sa, &error))
    {
      ev->addr_sa = log_sockaddr (log, &sa);
      ev->addr_decoded = TRUE;
    }
  else
    ev->addr_error = g_strdup (error->message);
}

/* Decodes PEER or LOCAL as @call reads it.  Returns the log's copy, or
 * NULL with the reason in @ret_error (when given). */
static const AirlockSockaddr *
decode_other (AirlockEventLog *log, const AirlockEvent *ev, GBytes *raw, AirlockSockaddrCall call,
              char **ret_error)
{
  gsize len;
  const guint8 *bytes = g_bytes_get_data (raw, &len);
  g_autoptr (GError) error = NULL;
  AirlockSockaddr sa;
  AirlockSockaddr *ret = &sa;
  gboolean ok;

  memset (&sa, 0, sizeof sa);

  if (ev->has_socket)
    ok = airlock_sockaddr_decode_for_socket ((int) ev->sock_family, (int) ev->sock_type,
                                             (int) ev->sock_protocol, call, bytes, len, ret,
                                             &error);
  else
    ok = airlock_sockaddr_decode (bytes, len, ret, &error);
  if (!ok && ret_error)
    *ret_error = g_strdup (error->message);
  return ok ? log_sockaddr (log, &sa) : NULL;
}

/* The DNS messages this event's payload completes. */
static void
decode_dns (AirlockEventLog *log, AirlockEvent *ev)
{
  gsize len;
  const guint8 *bytes = g_bytes_get_data (ev->payload, &len);
  guint64 wire_len = ev->has_payload_len ? MAX (ev->payload_len, (guint64) len) : len;

  /* Its own array from now on, instead of the shared empty one. */
  if (ev->dns == no_dns ())
    ev->dns = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_dns_query_free);

  if (!is_stream (ev))
    {
      g_ptr_array_add (ev->dns, airlock_dns_parse_query (bytes, len,
                                                         (gsize) MIN (wire_len, G_MAXSIZE)));
      return;
    }
  /* Bytes that never went out would corrupt the connection's framing. */
  if (ev->action == AIRLOCK_ACTION_DENY)
    return;
  if (!ev->has_sock_id)
    {
      /* No connection to reassemble in: this write alone. */
      g_autoptr (AirlockDnsTcpStream) stream = airlock_dns_tcp_stream_new (0);
      g_autoptr (GPtrArray) done = airlock_dns_tcp_stream_feed (stream, bytes, len);
      AirlockDnsQuery *rest;

      for (guint i = 0; i < done->len; i++)
        g_ptr_array_add (ev->dns, g_steal_pointer (&done->pdata[i]));
      rest = airlock_dns_tcp_stream_finish (stream);
      if (rest)
        g_ptr_array_add (ev->dns, rest);
      return;
    }
  {
    AirlockDnsTcpStream *stream = g_hash_table_lookup (log->tcp_dns, &ev->sock_id);
    g_autoptr (GPtrArray) done = NULL;

    if (stream == NULL)
      {
        stream = airlock_dns_tcp_stream_new (0);
        g_hash_table_insert (log->tcp_dns, g_memdup2 (&ev->sock_id, sizeof ev->sock_id), stream);
      }
    done = airlock_dns_tcp_stream_feed (stream, bytes, len);
    for (guint i = 0; i < done->len; i++)
      g_ptr_array_add (ev->dns, g_steal_pointer (&done->pdata[i]));
    /* The supervisor copied only the first bytes: the rest is a gap. */
    if (wire_len > len)
      {
        g_autoptr (GPtrArray) clipped =
          airlock_dns_tcp_stream_feed_gap (stream, (gsize) MIN (wire_len - len, G_MAXSIZE));

        for (guint i = 0; i < clipped->len; i++)
          g_ptr_array_add (ev->dns, g_steal_pointer (&clipped->pdata[i]));
      }
  }
}

/* Groups the entries of one sendmmsg (index 0 … vlen-1, in order, from one
 * thread) so a RESULT for the first reaches all of them. */
static void
group_mmsg (AirlockEventLog *log, AirlockEvent *ev)
{
  gpointer tid_key = GUINT_TO_POINTER (ev->tid);
  AirlockEvent *prev = g_hash_table_lookup (log->mmsg_open, tid_key);
  GPtrArray *group = NULL;

  if (ev->msg_index > 0 && prev != NULL && prev->msg_index + 1 == ev->msg_index
      && prev->msg_count == ev->msg_count && prev->syscall_nr == ev->syscall_nr)
    group = g_hash_table_lookup (log->mmsg_groups, &prev->mmsg_first_seq);

  if (group != NULL)
    ev->mmsg_first_seq = prev->mmsg_first_seq;
  else
    {
      /* Entry 0, or an entry whose predecessor is missing: its own group. */
      ev->mmsg_first_seq = ev->seq;
      group = g_ptr_array_new ();
      g_hash_table_insert (log->mmsg_groups, &ev->mmsg_first_seq, group);
    }
  g_ptr_array_add (group, ev);
  if (ev->msg_index + 1 < ev->msg_count)
    g_hash_table_insert (log->mmsg_open, tid_key, ev);
  else
    g_hash_table_remove (log->mmsg_open, tid_key);
}

static void
set_result (AirlockEvent *target, const AirlockEvent *result)
{
  target->has_result = TRUE;
  target->result = result->result;
  target->result_seq = result->seq;
}

gboolean
airlock_event_log_add_frame (AirlockEventLog *log, const AirlockFrame *frame, GError **error)
{
  AirlockFrameTlvs parsed;
  const AirlockFrameTlvs *tlvs;
  g_autofree char *problem = NULL;
  gsize len;
  const guint8 *payload;
  AirlockEvent *ev;
  AirlockEvent *target = NULL;
  guint32 kind;
  guint64 value64;

  g_return_val_if_fail (log != NULL, FALSE);
  g_return_val_if_fail (frame != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (frame->type != AIRLOCK_FRAME_EVENT)
    {
      g_set_error (error, AIRLOCK_EVENT_ERROR, AIRLOCK_EVENT_ERROR_MALFORMED,
                   "frame %" G_GUINT64_FORMAT " is a %s frame, not an event", frame->seq,
                   airlock_frame_type_to_string (frame->type));
      return FALSE;
    }
  if (log->have_last_seq && frame->seq <= log->last_seq)
    {
      g_set_error (error, AIRLOCK_EVENT_ERROR, AIRLOCK_EVENT_ERROR_SEQUENCE,
                   "event frame %" G_GUINT64_FORMAT " comes after frame %" G_GUINT64_FORMAT,
                   frame->seq, log->last_seq);
      return FALSE;
    }
  /* Checked here, so this is usable on frames from anywhere (a bundle
   * being verified, a test); unless the channel handing this frame over
   * has just checked these very bytes, as an EVENT frame. */
  tlvs = airlock_frame_find_checked (frame->payload, AIRLOCK_FRAME_EVENT);
  payload = g_bytes_get_data (frame->payload, &len);
  if (tlvs == NULL
      && !airlock_frame_parse_tlvs (AIRLOCK_FRAME_EVENT, payload, len,
                                    frame->offset + AIRLOCK_FRAME_HEADER_SIZE, &parsed, &problem))
    {
      g_set_error (error, AIRLOCK_EVENT_ERROR, AIRLOCK_EVENT_ERROR_MALFORMED,
                   "malformed event frame %" G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT ": %s",
                   frame->seq, frame->offset, problem);
      return FALSE;
    }
  if (tlvs == NULL)
    tlvs = &parsed;

  /* Checks that span frames, before anything is made or changed. */
  kind = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_EV_KIND]);
  if (kind == AIRLOCK_EVENT_RESULT)
    {
      /* Mandatory in a RESULT (check_tlvs). */
      guint64 ref = airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_EV_REF]);

      target = log_find_syscall (log, ref);
      if (target == NULL || target->has_result)
        {
          g_set_error (error, AIRLOCK_EVENT_ERROR, AIRLOCK_EVENT_ERROR_BAD_REF,
                       "result event %" G_GUINT64_FORMAT " refers to frame %" G_GUINT64_FORMAT
                       ", %s", frame->seq, ref,
                       target == NULL ? "which is not an earlier syscall event"
                                      : "whose result was already reported");
          return FALSE;
        }
    }

  ev = log_event_new (log);
  ev->seq = frame->seq;
  ev->dns = no_dns ();
  ev->kind = kind;
  (void) tlv_u64 (tlvs, AIRLOCK_TLV_EV_TIME_NS, &ev->time_ns);   /* mandatory */
  (void) tlv_u32 (tlvs, AIRLOCK_TLV_EV_ACTION, &ev->action);
  (void) tlv_u32 (tlvs, AIRLOCK_TLV_EV_REASON, &ev->reason);

  if (tlv_u32 (tlvs, AIRLOCK_TLV_EV_SYSCALL, &ev->syscall_nr))
    {
      ev->has_syscall = TRUE;
      (void) tlv_u32 (tlvs, AIRLOCK_TLV_EV_AUDIT_ARCH, &ev->audit_arch);
      ev->abi = airlock_syscall_abi (ev->audit_arch, ev->syscall_nr);
      ev->foreign_abi = !g_str_equal (ev->abi, "x86_64") && !g_str_equal (ev->abi, "aarch64");
      ev->syscall_name = log_syscall_name (log, ev->audit_arch, ev->syscall_nr);
    }
  if (tlvs->present[AIRLOCK_TLV_EV_ARGS])
    {
      ev->has_args = TRUE;
      for (guint i = 0; i < 6; i++)
        ev->args[i] = le64_at (tlvs->tlv[AIRLOCK_TLV_EV_ARGS].value + 8 * i);
    }

  ev->has_pid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_PID, &ev->pid);
  ev->has_tid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_TID, &ev->tid);
  ev->has_ppid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_PPID, &ev->ppid);
  ev->has_nspid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_NSPID, &ev->nspid);
  ev->has_uid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_UID, &ev->uid);
  ev->has_gid = tlv_u32 (tlvs, AIRLOCK_TLV_EV_GID, &ev->gid);
  ev->exe = log_escaped (log, tlvs, AIRLOCK_TLV_EV_EXE);
  ev->argv = log_argv (log, tlvs, AIRLOCK_TLV_EV_ARGV);
  ev->exec_argv = log_argv (log, tlvs, AIRLOCK_TLV_EV_EXEC_ARGV);

  ev->has_fd = tlv_u32 (tlvs, AIRLOCK_TLV_EV_FD, &ev->fd);
  if (tlvs->present[AIRLOCK_TLV_EV_SOCKET])
    {
      const guint8 *v = tlvs->tlv[AIRLOCK_TLV_EV_SOCKET].value;

      ev->has_socket = TRUE;
      ev->sock_family = wire_get_le32 (v);
      ev->sock_type = wire_get_le32 (v + 4);
      ev->sock_protocol = wire_get_le32 (v + 8);
    }
  else if (ev->has_args && (syscall_is (ev, "socket") || syscall_is (ev, "socketpair")))
    {
      /* The call's own arguments are the socket it asks for. */
      ev->has_socket = TRUE;
      ev->socket_from_args = TRUE;
      ev->sock_family = (guint32) ev->args[0];
      ev->sock_type = (guint32) ev->args[1];
      ev->sock_protocol = (guint32) ev->args[2];
    }
  ev->has_sock_id = tlv_u64 (tlvs, AIRLOCK_TLV_EV_SOCK_ID, &ev->sock_id);
  ev->has_msg_flags = tlv_u32 (tlvs, AIRLOCK_TLV_EV_MSG_FLAGS, &ev->msg_flags);
  if (tlvs->present[AIRLOCK_TLV_EV_MSG_INDEX])
    {
      ev->has_msg_index = TRUE;
      ev->msg_index = wire_get_le32 (tlvs->tlv[AIRLOCK_TLV_EV_MSG_INDEX].value);
      ev->msg_count = wire_get_le32 (tlvs->tlv[AIRLOCK_TLV_EV_MSG_INDEX].value + 4);
    }

  ev->addr = log_addr_bytes (log, tlvs, AIRLOCK_TLV_EV_ADDR);
  ev->has_addrlen = tlv_u32 (tlvs, AIRLOCK_TLV_EV_ADDRLEN, &ev->addrlen);
  if (ev->addr)
    decode_addr (log, ev);
  ev->peer = log_addr_bytes (log, tlvs, AIRLOCK_TLV_EV_PEER);
  if (ev->peer)
    {
      ev->peer_sa = decode_other (log, ev, ev->peer, AIRLOCK_SOCKADDR_CALL_CONNECT, &ev->peer_error);
      ev->peer_decoded = ev->peer_sa != NULL;
    }
  ev->local = log_addr_bytes (log, tlvs, AIRLOCK_TLV_EV_LOCAL);
  if (ev->local)
    {
      ev->local_sa = decode_other (log, ev, ev->local, AIRLOCK_SOCKADDR_CALL_BIND, NULL);
      ev->local_decoded = ev->local_sa != NULL;
    }

  ev->payload = tlv_bytes (tlvs, AIRLOCK_TLV_EV_PAYLOAD);
  ev->has_payload_len = tlv_u64 (tlvs, AIRLOCK_TLV_EV_PAYLOAD_LEN, &ev->payload_len);
  ev->path = log_escaped (log, tlvs, AIRLOCK_TLV_EV_PATH);
  ev->note = log_escaped (log, tlvs, AIRLOCK_TLV_EV_NOTE);
  ev->has_ref = tlv_u64 (tlvs, AIRLOCK_TLV_EV_REF, &ev->ref);
  if (tlv_u64 (tlvs, AIRLOCK_TLV_EV_RESULT, &value64))
    {
      ev->has_result = TRUE;
      ev->result = (gint64) value64;   /* two's complement on the wire */
      ev->result_seq = ev->seq;
    }
  ev->has_exit_status = tlv_u32 (tlvs, AIRLOCK_TLV_EV_EXIT_STATUS, &ev->exit_status);
  /* Every event belongs to the phase the last WORKLOAD_START opened (the
   * controls' records never mix with the image's). */
  {
    guint32 phase = 0;

    if (tlv_u32 (tlvs, AIRLOCK_TLV_EV_PHASE, &phase) && ev->kind == AIRLOCK_EVENT_WORKLOAD_START)
      log->phase = phase;
    ev->phase = tlv_u32 (tlvs, AIRLOCK_TLV_EV_PHASE, &phase) ? phase : log->phase;
  }

  log->have_last_seq = TRUE;
  log->last_seq = ev->seq;
  g_ptr_array_add (log->events, ev);
  if (ev->kind == AIRLOCK_EVENT_SYSCALL)
    {
      if (ev->has_msg_index)
        group_mmsg (log, ev);
      if (ev->payload && airlock_event_is_send (ev))
        decode_dns (log, ev);
    }
  if (target != NULL)
    {
      GPtrArray *group = target->has_msg_index
                           ? g_hash_table_lookup (log->mmsg_groups, &target->mmsg_first_seq)
                           : NULL;

      /* sendmmsg: the RESULT refers to entry 0 and counts the messages
       * sent; every entry of the call gets it. */
      if (group != NULL && target->mmsg_first_seq == target->seq)
        for (guint i = 0; i < group->len; i++)
          set_result (group->pdata[i], ev);
      else
        set_result (target, ev);
    }
  return TRUE;
}
