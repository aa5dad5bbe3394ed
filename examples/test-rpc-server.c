/* An egress test suite for a JSON-RPC stdio server (an MCP server, say),
 * written as GLib tests: copy it, point it at your image, change the
 * conversation.
 *
 * Each case boots the image in a VM of each selected arch, talks to its
 * entrypoint over stdin/stdout, then proves that the workload made no
 * network attempt at all while it answered: the supervisor recorded none,
 * the capture of the VM's NIC holds nothing unexplained, and the negative
 * controls (egress the supervisor itself makes first) were seen both ways,
 * so the detector was not blind.
 *
 *   /ARCH/rpc/initialize-and-call-have-no-egress
 *       a conversation: initialize, the initialized notification, then
 *       tools/call add 2 + 3, each answer read and checked before the next
 *       request is sent; then end of file, and the server must exit 0;
 *   /ARCH/rpc/tools-list-has-no-egress
 *       a script: the whole stdin given up front (initialize, initialized,
 *       tools/list, shutdown), the run waited for, and its stdout checked
 *       afterwards, one answer per request and none for the notification;
 *   /ARCH/rpc/update-check-is-caught
 *       the other side: the same server with its update check on
 *       (RPC_UPDATE_CHECK=1), which phones home during initialize; it
 *       still answers, and the run must fail naming the DNS query for
 *       pypi.org its update check made;
 *   /ARCH/rpc/update-check-admitted-by-its-policy
 *       the same server allowed to phone pypi.org: what it may reach is
 *       said once, on the case (airlock_case_allow), and
 *       airlock_assert_egress_admitted() holds every attempt to that, as
 *       the verdict judged it (by name, SNI and Host); the run passes.
 *
 * Run it (the image is the `rpc` sample of airlock's build, or yours):
 *
 *   ./test-rpc-server --airlock-image=oci-archive:rpc.tar --airlock-arch=all \
 *                     --airlock-out=bundles
 *
 * An arch that cannot run here (no QEMU for it) skips with the reason. */

#include <airlock.h>
#include <json-glib/json-glib.h>
#include <string.h>

/* Under TCG (no KVM) the first answer waits for the negative controls and
 * the workload's start, each a few seconds of emulated CPU. */
#define ANSWER_TIMEOUT_MS 120000
/* The workload's own ceiling: a server that stops answering is ended by
 * the guest, and the exit code assertion then says so. */
#define CASE_TIMEOUT_S 300

#define PROTOCOL_VERSION "2024-11-05"
#define INITIALIZE_REQUEST                                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"                    \
  "\"protocolVersion\":\"" PROTOCOL_VERSION "\",\"capabilities\":{},"                        \
  "\"clientInfo\":{\"name\":\"airlock-example\",\"version\":\"1\"}}}"
#define INITIALIZED_NOTIFICATION "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"

/* ---- JSON-RPC over the run's stdio */

/* The member @name of @object, which must be an object (borrowed). */
static JsonObject *
object_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  return json_node_get_object (node);
}

static JsonArray *
array_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (node));
  return json_node_get_array (node);
}

/* Element @i of @array, which must be an object (borrowed). */
static JsonObject *
object_element (JsonArray *array, guint i)
{
  JsonNode *node;

  g_assert_cmpuint (i, <, json_array_get_length (array));
  node = json_array_get_element (array, i);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  return json_node_get_object (node);
}

/* One line of the server's stdout parsed (transfer full).  An MCP stdio
 * server writes exactly one JSON message per line and nothing else there
 * (its log goes to stderr), so anything else fails the test. */
static JsonNode *
parse_message (const char *line)
{
  g_autoptr (GError) error = NULL;
  JsonNode *node = json_from_string (line, &error);

  g_assert_no_error (error);
  g_assert_nonnull (node); /* an empty line */
  return node;
}

/* The "result" of @response, which must answer request @id without an
 * error (borrowed from @response). */
static JsonObject *
rpc_result (JsonNode *response, gint64 id)
{
  JsonObject *message;

  g_assert_true (JSON_NODE_HOLDS_OBJECT (response));
  message = json_node_get_object (response);
  g_assert_cmpstr (json_object_get_string_member_with_default (message, "jsonrpc", NULL), ==,
                   "2.0");
  g_assert_cmpint (json_object_get_int_member_with_default (message, "id", -1), ==, id);
  g_assert_false (json_object_has_member (message, "error"));
  return object_member (message, "result");
}

/* Sends @request (one message, no '\n') and returns the answer parsed
 * (transfer full).  Both go to the test's log, so a failure shows the
 * conversation. */
static JsonNode *
rpc_call (AirlockTestFixture *f, const char *request)
{
  g_autofree char *answer = NULL;

  g_test_message ("-> %s", request);
  answer = airlock_test_exchange (f, request, ANSWER_TIMEOUT_MS);
  g_test_message ("<- %s", answer);
  return parse_message (answer);
}

/* Sends a notification: JSON-RPC gives it no answer, so nothing is read. */
static void
rpc_notify (AirlockTestFixture *f, const char *notification)
{
  g_autofree char *line = g_strconcat (notification, "\n", NULL);
  g_autoptr (GError) error = NULL;

  g_test_message ("-> %s", notification);
  airlock_run_write_stdin (f->run, line, strlen (line), &error);
  g_assert_no_error (error);
}

static void
check_initialize_result (JsonObject *result)
{
  JsonObject *server_info = object_member (result, "serverInfo");

  g_assert_cmpstr (json_object_get_string_member_with_default (result, "protocolVersion", NULL),
                   ==, PROTOCOL_VERSION);
  g_assert_cmpstr (json_object_get_string_member_with_default (server_info, "name", NULL), ==,
                   "airlock-rpc-sample");
  /* The server says it has tools, which is what the cases go on to use. */
  object_member (object_member (result, "capabilities"), "tools");
}

/* The proof, whatever the conversation was: no egress, a detector that
 * saw its controls, and a server that ended as a server should. */
static void
assert_clean_run (AirlockResult *r)
{
  airlock_assert_no_egress (r);
  airlock_assert_controls_observed (r);
  airlock_assert_exit_code (r, 0);
}

/* ---- the cases */

static void
test_initialize_and_call (AirlockTestFixture *f, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (JsonNode) initialize = NULL;
  g_autoptr (JsonNode) call = NULL;
  JsonObject *result, *content;
  JsonArray *contents;
  AirlockResult *r;

  airlock_case_set_timeout (f->kase, CASE_TIMEOUT_S);
  airlock_test_start (f);

  initialize = rpc_call (f, INITIALIZE_REQUEST);
  check_initialize_result (rpc_result (initialize, 1));
  rpc_notify (f, INITIALIZED_NOTIFICATION);

  call = rpc_call (f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                      "\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}}");
  result = rpc_result (call, 2);
  contents = array_member (result, "content");
  g_assert_cmpuint (json_array_get_length (contents), ==, 1);
  content = object_element (contents, 0);
  g_assert_cmpstr (json_object_get_string_member_with_default (content, "type", NULL), ==, "text");
  g_assert_cmpstr (json_object_get_string_member_with_default (content, "text", NULL), ==, "5");

  /* End of file is how an MCP client ends a stdio server. */
  airlock_run_close_stdin (f->run);
  r = airlock_test_wait (f);
  assert_clean_run (r);
}

/* What the server offers, in its order. */
static const char *const expected_tools[] = { "add", "echo", NULL };

static void
test_tools_list (AirlockTestFixture *f, gconstpointer data G_GNUC_UNUSED)
{
  static const char script[] =
    INITIALIZE_REQUEST "\n"
    INITIALIZED_NOTIFICATION "\n"
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}\n";
  g_autoptr (GBytes) stdin_bytes = g_bytes_new_static (script, strlen (script));
  g_autoptr (JsonNode) initialize = NULL;
  g_autoptr (JsonNode) list = NULL;
  g_autoptr (JsonNode) bye = NULL;
  g_autofree char *output = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  JsonArray *tools;
  AirlockResult *r;
  GBytes *stdout_bytes;
  gsize len;
  const char *data_out;

  airlock_case_set_timeout (f->kase, CASE_TIMEOUT_S);
  airlock_case_set_stdin_bytes (f->kase, stdin_bytes);
  r = airlock_test_run (f);

  /* Three requests, three answers, in order, and nothing for the
   * notification (the trailing "" is what follows the last '\n'). */
  stdout_bytes = airlock_result_get_stdout (r);
  data_out = g_bytes_get_data (stdout_bytes, &len);
  output = g_strndup (data_out, len);
  g_test_message ("stdout:\n%s", output);
  lines = g_strsplit (output, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 4);
  g_assert_cmpstr (lines[3], ==, "");

  initialize = parse_message (lines[0]);
  check_initialize_result (rpc_result (initialize, 1));

  list = parse_message (lines[1]);
  tools = array_member (rpc_result (list, 2), "tools");
  for (guint i = 0; i < json_array_get_length (tools); i++)
    {
      JsonObject *tool = object_element (tools, i);

      /* A client can only call a tool whose arguments it can describe. */
      g_assert_cmpstr (json_object_get_string_member_with_default (
                         object_member (tool, "inputSchema"), "type", NULL), ==, "object");
      g_ptr_array_add (names, (gpointer) json_object_get_string_member_with_default (tool, "name",
                                                                                     ""));
    }
  g_ptr_array_add (names, NULL);
  g_assert_cmpstrv ((const char *const *) names->pdata, expected_tools);

  bye = parse_message (lines[2]);
  rpc_result (bye, 3);

  assert_clean_run (r);
}

/* The name @attempt queried, without the final dot, is @name. */
static gboolean
attempt_asks_for (const AirlockAttempt *attempt, const char *name)
{
  for (guint i = 0; attempt->dns_names && attempt->dns_names[i]; i++)
    {
      g_autofree char *asked = g_strdup (attempt->dns_names[i]);

      if (g_str_has_suffix (asked, "."))
        asked[strlen (asked) - 1] = '\0';
      if (g_ascii_strcasecmp (asked, name) == 0)
        return TRUE;
    }
  return FALSE;
}

/* A server that phones home is caught: with its update check on, the
 * sample's initialize resolves pypi.org before it answers.  Whatever the
 * network says (nothing, or a sinkhole's answer), the server answers and
 * the run fails, naming the query. */
static void
test_update_check_is_caught (AirlockTestFixture *f, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (JsonNode) initialize = NULL;
  g_autofree char *err = NULL;
  const AirlockAttempt *query = NULL;
  GPtrArray *attempts;
  AirlockResult *r;
  GBytes *stderr_bytes;
  gsize len;
  const char *data_err;

  airlock_case_set_timeout (f->kase, CASE_TIMEOUT_S);
  airlock_case_set_env (f->kase, "RPC_UPDATE_CHECK", "1");
  airlock_test_start (f);
  initialize = rpc_call (f, INITIALIZE_REQUEST);
  check_initialize_result (rpc_result (initialize, 1));
  airlock_run_close_stdin (f->run);
  r = airlock_test_wait (f);

  /* What it said it did, on stderr (stdout is the protocol's). */
  stderr_bytes = airlock_result_get_stderr (r);
  data_err = g_bytes_get_data (stderr_bytes, &len);
  err = g_strndup (data_err, len);
  g_test_message ("stderr:\n%s", err);
  g_assert_nonnull (strstr (err, "rpc-server: update check: "));

  attempts = airlock_result_get_attempts (r);
  for (guint i = 0; i < attempts->len && !query; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      if (a->egress && attempt_asks_for (a, "pypi.org"))
        query = a;
    }
  if (!query)
    {
      for (guint i = 0; i < attempts->len; i++)
        {
          g_autofree char *line = airlock_attempt_to_string (attempts->pdata[i]);

          g_test_message ("attempt: %s", line);
        }
      g_test_fail_printf ("no egress attempt asked for pypi.org");
      return;
    }
  g_assert_false (query->admitted);
  airlock_assert_verdict (r, AIRLOCK_VERDICT_FAIL);
  airlock_assert_controls_observed (r);
  airlock_assert_exit_code (r, 0);
}

/* The update check allowed: the rules are given once, to the case, and
 * the assertion follows them (the verdict judged each attempt by the name
 * its address was handed out for, and by the SNI and Host it sent). */
static void
test_update_check_admitted (AirlockTestFixture *f, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (JsonNode) initialize = NULL;
  g_autoptr (GError) error = NULL;
  AirlockResult *r;
  guint egress = 0;
  GPtrArray *attempts;

  airlock_case_set_timeout (f->kase, CASE_TIMEOUT_S);
  airlock_case_set_env (f->kase, "RPC_UPDATE_CHECK", "1");
  if (!airlock_case_allow (f->kase,
                           "allow udp any port 53 dns=pypi.org\n"
                           "allow tcp any port 443 host=pypi.org exe=/usr/local/bin/rpc-server\n"
                           "allow tcp any port 80 host=pypi.org exe=/usr/local/bin/rpc-server\n",
                           "test-rpc-server", &error))
    g_error ("%s", error->message);
  airlock_test_start (f);
  initialize = rpc_call (f, INITIALIZE_REQUEST);
  check_initialize_result (rpc_result (initialize, 1));
  airlock_run_close_stdin (f->run);
  r = airlock_test_wait (f);

  attempts = airlock_result_get_attempts (r);
  for (guint i = 0; i < attempts->len; i++)
    egress += ((const AirlockAttempt *) attempts->pdata[i])->egress;
  /* It did phone home: the pass below is the policy's, not silence. */
  g_assert_cmpuint (egress, >, 0);
  airlock_assert_egress_admitted (r);
  airlock_assert_verdict (r, AIRLOCK_VERDICT_PASS);
  airlock_assert_controls_observed (r);
  airlock_assert_exit_code (r, 0);
}

int
main (int argc, char **argv)
{
  airlock_test_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);
  /* Without an image every case would fail the same way: say it once. */
  if (!airlock_test_get_image ())
    {
      g_printerr ("%s: no image to test: pass --airlock-image=REF (e.g. "
                  "oci-archive:rpc.tar) or set AIRLOCK_TEST_IMAGE\n",
                  g_get_prgname ());
      return 2;
    }
  airlock_test_add ("/rpc/initialize-and-call-have-no-egress", NULL, test_initialize_and_call);
  airlock_test_add ("/rpc/tools-list-has-no-egress", NULL, test_tools_list);
  airlock_test_add ("/rpc/update-check-is-caught", NULL, test_update_check_is_caught);
  airlock_test_add ("/rpc/update-check-admitted-by-its-policy", NULL, test_update_check_admitted);
  return g_test_run ();
}
