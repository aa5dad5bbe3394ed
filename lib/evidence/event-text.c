/* An event as text for people and for tests' expectations: its
 * destination, its key line and what became of the call (event.h).  Kept
 * apart from the decoder (event.c), which builds the events these read;
 * event-json.c is the same events as JSON. */
#include "config.h"

#include "event.h"
#include "event-private.h"

#include "frame-private.h"

const AirlockSockaddr *
airlock_event_get_destination (const AirlockEvent *ev)
{
  g_return_val_if_fail (ev != NULL, NULL);

  if (ev->addr != NULL)
    {
      if (!ev->addr_decoded)
        return NULL;
      /* A TCP send's address is ignored: the peer is where it goes. */
      if (ev->addr_sa->effect != AIRLOCK_SOCKADDR_NO_ADDRESS)
        return ev->addr_sa;
    }
  if (ev->peer != NULL && ev->peer_decoded)
    return ev->peer_sa;
  return NULL;
}

static char *
event_key (const AirlockEvent *ev)
{
  const AirlockSockaddr *dest;
  g_autofree char *triple = NULL;
  gboolean undecodable;

  if (!ev->has_socket)
    return g_strdup ("-");
  dest = airlock_event_get_destination (ev);
  if (dest != NULL)
    return airlock_attempt_key ((int) ev->sock_family, (int) ev->sock_type,
                                (int) ev->sock_protocol, dest);
  undecodable = (ev->addr != NULL && !ev->addr_decoded)
                || ((ev->addr == NULL || ev->addr_sa->effect == AIRLOCK_SOCKADDR_NO_ADDRESS)
                    && ev->peer != NULL && !ev->peer_decoded);
  triple = airlock_socket_triple_to_string ((int) ev->sock_family, (int) ev->sock_type,
                                            (int) ev->sock_protocol);
  return g_strdup_printf ("%s %s", triple, undecodable ? "?" : "-");
}

char *
airlock_event_key_line (const AirlockEvent *ev)
{
  GString *out;
  g_autofree char *key = NULL;

  g_return_val_if_fail (ev != NULL, NULL);

  if (ev->kind != AIRLOCK_EVENT_SYSCALL || !ev->has_syscall)
    return NULL;

  out = g_string_new (NULL);
  if (ev->foreign_abi)
    g_string_append_printf (out, "%s:", ev->abi);
  g_string_append (out, ev->syscall_name);
  if (ev->action == AIRLOCK_ACTION_DENY)
    g_string_append_printf (out, " deny:%s", airlock_deny_reason_to_string (ev->reason));
  else
    g_string_append_printf (out, " %s", airlock_event_action_to_string (ev->action));
  key = event_key (ev);
  g_string_append_printf (out, " %s", key);
  for (guint i = 0; i < ev->dns->len; i++)
    {
      const AirlockDnsQuery *query = ev->dns->pdata[i];

      for (guint j = 0; j < query->questions->len; j++)
        {
          const AirlockDnsQuestion *q = query->questions->pdata[j];

          g_string_append_printf (out, " dns=%s", q->name);
        }
    }
  return g_string_free (out, FALSE);
}

char *
airlock_event_outcome (const AirlockEvent *ev)
{
  g_return_val_if_fail (ev != NULL, NULL);

  if (ev->kind != AIRLOCK_EVENT_SYSCALL)
    return g_strdup ("");
  if (ev->action == AIRLOCK_ACTION_DENY)
    return g_strdup_printf ("denied: %s", airlock_deny_reason_to_string (ev->reason));
  if (ev->has_result)
    {
      if (ev->result < 0)
        return airlock_result_to_string (ev->result);
      if (ev->has_msg_index)
        return g_strdup ((guint64) ev->msg_index < (guint64) ev->result ? "sent" : "not sent");
      return g_strdup (airlock_event_is_send (ev) ? "sent" : "ok");
    }
  if (ev->action == AIRLOCK_ACTION_EMULATE)
    return g_strdup ("no result");
  return g_strdup ("allowed");
}
