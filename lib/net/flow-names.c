/* The names a flow is known by (see capture-private.h): each DNS question
 * its queries asked, over UDP or reassembled from TCP/53, and the TLS SNI
 * or HTTP Host its first payload named — at most
 * AIRLOCK_CAPTURE_NAMES_MAX per flow, and an anomaly past that.  Its own
 * file because both the flow table (a datagram's questions) and the TCP
 * reassembly (a stream's) add to it: in either of them, the two would call
 * each other. */
#include "config.h"

#include "capture-private.h"

#include <string.h>

void
net_flow_add_name (AirlockCapture *capture, GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp (names->pdata[i], name) == 0)
      return;
  if (names->len >= AIRLOCK_CAPTURE_NAMES_MAX)
    {
      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                                "more than " G_STRINGIFY (AIRLOCK_CAPTURE_NAMES_MAX)
                                " names in one flow");
      return;
    }
  g_ptr_array_add (names, g_strdup (name));
}

void
net_flow_add_dns_query (AirlockCapture *capture, FlowState *state, const AirlockDnsQuery *query)
{
  if (query->problem != AIRLOCK_DNS_WELL_FORMED)
    state->flow.dns_malformed++;
  for (guint i = 0; i < query->questions->len; i++)
    {
      const AirlockDnsQuestion *q = query->questions->pdata[i];

      if (q->name[0] != '\0')
        net_flow_add_name (capture, state->flow.dns_names, q->name);
    }
}

void
net_flow_add_dns_queries (AirlockCapture *capture, FlowState *state, GPtrArray *queries)
{
  for (guint i = 0; i < queries->len; i++)
    net_flow_add_dns_query (capture, state, queries->pdata[i]);
  g_ptr_array_unref (queries);
}
