"""schemathesis hooks for the vision API (loaded through SCHEMATHESIS_HOOKS=hooks).

Opaque cursors: a positive case keeps a `cursor` only when the API gave that value out before (otherwise it
is sent empty), and a stream's Last-Event-ID only when that stream of that task gave it out (otherwise it
is one that stream gave out, or empty).

A schema can say that `file` is an MP4 or MOV, that `files` are JPG/PNG/WEBP images and that
`stream_url` must be reachable from the service, but no generator can make a playable clip or a
reachable stream from that. So in *positive* cases only (schema-valid data that the server must
accept) these three are replaced by real ones: a clip served on loopback by scripts/fuzz/target.js and
real files from the shared test data. Likewise a webhook `url` must answer the registration's verification:
positive registrations point at the loopback receiver of scripts/fuzz/target.js, negative ones at a closed
loopback port (never the internet). Negative cases are otherwise sent exactly as generated.

Opaque ids: an endpoint_id or delivery_id is real only when the API gave it out. Positive cases use one of
those most of the time (so that rotate, deliveries and redeliver reach a stored endpoint and a logged
delivery) and a generated one otherwise (a 404). A positive redeliver names a delivery last seen dead (the
only kind it accepts), or a delivery id never given out when none is.

No hook removes a generated header or parameter: hooks only supply ids, cursors, files and receivers.

A second check: a 503 must come from an operation that documents 503 in docs/openapi.yaml and carry one of
the three 503 codes of SPEC.md section 7 and a Retry-After (schemathesis.toml lets only the calls that can
be overloaded answer 503 at all).
"""
import json
import os
import random
import re
import threading
import time
import uuid

import requests
import schemathesis

MEDIA_URL = os.environ["FUZZ_MEDIA_URL"]
RECEIVER_URL = os.environ["FUZZ_RECEIVER_URL"]
SHARED = os.environ["FUZZ_SHARED_DIR"]
TARGET_URL = os.environ["FUZZ_TARGET_URL"]
API_KEY = os.environ["FUZZ_API_KEY"]
CLIP_NAME = "person_bicycle_car_parkinglot_intel.mp4"
with open(os.path.join(SHARED, "media", "videos", CLIP_NAME), "rb") as f:
    CLIP = f.read()
with open(os.path.join(SHARED, "media", "images", "cattle_cameratrap_crop.jpg"), "rb") as f:
    IMAGE = f.read()

SPEC_503 = {"OP-TASK-UPSTREAM-DOWN", "OP-TASK-BREAKER-OPEN", "OP-SYS-UNAVAILABLE"}


def _positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


# Cursors are opaque tokens the API hands out (signed for results): a schema-valid string is a valid
# cursor only when the API gave it out, so positive cases use those (or none) and negative ones anything.
GIVEN_CURSORS: set = set()
# Webhook endpoint ids the API gave out, and (endpoint_id, delivery_id) pairs of their delivery logs.
GIVEN_ENDPOINTS: set = set()
GIVEN_DELIVERIES: set = set()
# The logged deliveries last seen dead (the only ones redeliver accepts), and when each was last redelivered.
DEAD_DELIVERIES: set = set()
REDELIVERED_AT: dict = {}
# A delivery redelivered this recently may be pending again: an older answer that says dead is not believed.
REDELIVER_SETTLE_S = 5.0
# Stream event ids per (stream path, task_id): a Last-Event-ID is a cursor of one stream of one task.
GIVEN_STREAM_IDS: dict = {}
# schemathesis's workers are threads: these change and are read under this lock.
IDS_LOCK = threading.Lock()
WEBHOOKS = "/v1/vision/webhooks"


def _remember_webhook_ids(case, body) -> None:
    items = body.get("items") if isinstance(body.get("items"), list) else [body]
    endpoint = (case.path_parameters or {}).get("endpoint_id")
    with IDS_LOCK:
        for item in items:
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("endpoint_id"), str):
                GIVEN_ENDPOINTS.add(item["endpoint_id"])
            if isinstance(item.get("delivery_id"), str) and isinstance(endpoint, str):
                pair = (endpoint, item["delivery_id"])
                GIVEN_DELIVERIES.add(pair)
                settled = time.monotonic() - REDELIVERED_AT.get(pair, float("-inf")) > REDELIVER_SETTLE_S
                if item.get("status") == "dead" and settled:
                    DEAD_DELIVERIES.add(pair)
                elif "status" in item:
                    DEAD_DELIVERIES.discard(pair)


@schemathesis.hook
def after_call(context, case, response):
    if case.method.upper() == "DELETE" and response.status_code == 204:
        gone = (case.path_parameters or {}).get("endpoint_id")
        with IDS_LOCK:
            GIVEN_ENDPOINTS.discard(gone)
            GIVEN_DELIVERIES.difference_update({d for d in GIVEN_DELIVERIES if d[0] == gone})
            DEAD_DELIVERIES.difference_update({d for d in DEAD_DELIVERIES if d[0] == gone})
    content_type = (response.headers.get("content-type") or [""])[0]
    if content_type.startswith("text/event-stream"):
        # Each event's `id:` on a task's stream is a cursor of that stream of that task (for its Last-Event-ID):
        # a results stream's ids are frame cursors, an events stream's are events cursors.
        stream = (case.operation.path, (case.path_parameters or {}).get("task_id"))
        lines = response.content.decode("utf-8", "replace").splitlines()
        ids = {ln[3:].strip() for ln in lines if ln.startswith("id:")}
        with IDS_LOCK:
            GIVEN_STREAM_IDS.setdefault(stream, set()).update(ids - {""})
        return
    # Only JSON answers, parsed here with json.loads: schemathesis's response.json() caches its result as
    # the deserialized body, and the schema check would then judge a video byte range ("0") as JSON.
    if not content_type.startswith("application/json"):
        return
    try:
        body = json.loads(response.content)
        cursor = body.get("next_cursor")
    except Exception:  # noqa: BLE001 - not a JSON object
        return
    if isinstance(cursor, str) and cursor:
        GIVEN_CURSORS.add(cursor)
    if case.operation.path.startswith(WEBHOOKS) and 200 <= response.status_code < 300:
        _remember_webhook_ids(case, body)


def _redeliverable_ids(case) -> bool:
    """A positive redeliver names a delivery last seen dead, or one the API never gave out (a 404).

    Redelivering a logged delivery that is not dead is refused with 400 (`delivery_not_dead`), which schemathesis
    would count against a schema-valid request. The ids a link, a generator or schemathesis's pool of seen values
    gives (a delivered or pending delivery, say, perhaps one this module never saw listed) are replaced by a
    dead one when there is one, else by a delivery id that does not exist.
    """
    params = case.path_parameters
    if not isinstance(params, dict) or "delivery_id" not in params:
        return False
    pair = (params.get("endpoint_id"), params.get("delivery_id"))
    with IDS_LOCK:
        if pair in DEAD_DELIVERIES:
            chosen = pair
        elif DEAD_DELIVERIES:
            chosen = random.choice(sorted(DEAD_DELIVERIES))
        else:
            params["delivery_id"] = str(uuid.uuid4())
            return True
        DEAD_DELIVERIES.discard(chosen)
        REDELIVERED_AT[chosen] = time.monotonic()
    params["endpoint_id"], params["delivery_id"] = chosen
    return chosen != pair


def _given_webhook_ids(case) -> bool:
    """In most positive cases, a real endpoint id (and delivery id) for the path's generated ones."""
    params = case.path_parameters
    if not isinstance(params, dict) or "endpoint_id" not in params or random.random() < 0.2:
        return False
    with IDS_LOCK:
        pairs, endpoints = sorted(GIVEN_DELIVERIES), sorted(GIVEN_ENDPOINTS)
    if "delivery_id" in params:
        # Redeliver gets its ids from _redeliverable_ids.
        if not pairs or case.operation.path.endswith("/redeliver"):
            return False
        params["endpoint_id"], params["delivery_id"] = random.choice(pairs)
        return True
    if not endpoints:
        return False
    params["endpoint_id"] = random.choice(endpoints)
    return True


# RESULTS_WEBHOOK_MAX_ENDPOINTS of scripts/fuzz/target.js: a subject's registrations past it are refused with 400
# (`too_many_webhooks`), which schemathesis would count against a schema-valid request.
MAX_ENDPOINTS = 1000


def _room_for_an_endpoint() -> None:
    """Before a positive registration, once half the cap is registered, delete the oldest quarter."""
    with IDS_LOCK:
        if len(GIVEN_ENDPOINTS) < MAX_ENDPOINTS // 2:
            return
        doomed = sorted(GIVEN_ENDPOINTS)[: MAX_ENDPOINTS // 4]
        GIVEN_ENDPOINTS.difference_update(doomed)
        GIVEN_DELIVERIES.difference_update({d for d in GIVEN_DELIVERIES if d[0] in doomed})
        DEAD_DELIVERIES.difference_update({d for d in DEAD_DELIVERIES if d[0] in doomed})
    for endpoint in doomed:
        for _ in range(5):
            r = requests.delete(
                f"{TARGET_URL}{WEBHOOKS}/{endpoint}", headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30
            )
            if r.status_code != 429:
                break
            time.sleep(float(r.headers.get("retry-after", "1")))


URL_HOST = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)(.*)$", re.S)


def _loopback_only(value):
    """Any URL-like value of a negative case gets a closed loopback port as its host: never the internet."""
    if not isinstance(value, str):
        return value
    m = URL_HOST.match(value)
    return f"{m.group(1)}127.0.0.1:9{m.group(3)}" if m else value


SCENES = {"person_vehicle", "ship", "fishing", "fire_smoke", "cow_sheep"}


def _binary(value) -> bool:
    """Bytes, or schemathesis's wrapper of generated binary data (an object with bytes in `data`)."""
    return isinstance(value, (bytes, bytearray)) or isinstance(getattr(value, "data", None), (bytes, bytearray))


def _multipart_valid_images_body(body) -> bool:
    """True when a generated image-detections body, once written as multipart, is a valid request: the
    wire form cannot tell a one-item `files` array from a single `files` value, nor a property that a
    mutation removed and put back under the same part name. Such a "negative" case is not one."""
    if not isinstance(body, dict) or "files" not in body:
        return False
    if not set(body) <= {"files", "scene_code"}:
        # An extra property may not reach the wire at all (a run found one whose parts were only files and
        # scene_code, and the server's 201 was reported as ST201): treat it as absent, add a visible one.
        return True
    files = body["files"] if isinstance(body["files"], list) else [body["files"]]
    scene = body.get("scene_code")
    return (
        1 <= len(files) <= 10
        and all(_binary(f) for f in files)
        and (scene is None or scene in SCENES)
    )


@schemathesis.hook
def before_call(context, case, kwargs):
    path = case.operation.path
    method = case.method.upper()
    changed = False
    if isinstance(case.body, dict):
        # The coverage phase hands the same body object to several cases: an edit made in place for one
        # case (say the extra part of a negative one) would reach the next ones, positive ones included.
        case.body = dict(case.body)
    if (
        not _positive(case)
        and path == "/v1/vision/image-detections"
        and _multipart_valid_images_body(case.body)
    ):
        # Keep the case negative on the wire too: a part the document does not allow (additionalProperties),
        # which the server must refuse with 400.
        case.body["unexpected_field"] = "x"
        changed = True
    if _positive(case) and isinstance(case.query, dict):
        cursor = case.query.get("cursor")
        if cursor not in (None, "") and cursor not in GIVEN_CURSORS:
            case.query["cursor"] = ""
            changed = True
    if _positive(case) and case.headers is not None:
        # Last-Event-ID of a stream is a cursor too: one the API did not give out on that stream of that task
        # becomes one it did, or empty (which the API ignores, as it would an absent header).
        stream = (path, (case.path_parameters or {}).get("task_id"))
        for name in list(case.headers.keys()):
            if name.lower() != "last-event-id":
                continue
            with IDS_LOCK:
                ids = sorted(GIVEN_STREAM_IDS.get(stream, ()))
            if case.headers[name] != "" and case.headers[name] not in ids:
                case.headers[name] = random.choice(ids) if ids else ""
                changed = True
    if _positive(case) and method == "POST" and case.headers is not None:
        # A generator reuses values (examples, boundaries): the same key with another body is, rightly,
        # refused. A positive case is a new request, so it gets a key of its own.
        for name in list(case.headers.keys()):
            if name.lower() == "idempotency-key":
                case.headers[name] = str(uuid.uuid4())
                changed = True
    if _positive(case) and path.startswith(f"{WEBHOOKS}/") and _given_webhook_ids(case):
        changed = True
    if _positive(case) and path.endswith("/redeliver") and _redeliverable_ids(case):
        changed = True
    if isinstance(case.body, dict):
        if not _positive(case):
            if "stream_url" in case.body:
                case.body["stream_url"] = _loopback_only(case.body["stream_url"])
                changed = True
            if path == WEBHOOKS and "url" in case.body:
                case.body["url"] = _loopback_only(case.body["url"])
                changed = True
        elif path == WEBHOOKS and method == "POST" and "url" in case.body:
            _room_for_an_endpoint()
            case.body["url"] = RECEIVER_URL
            changed = True
        elif path == "/v1/vision/tasks" and method == "POST" and "stream_url" in case.body:
            case.body["stream_url"] = f"{MEDIA_URL}/{CLIP_NAME}"
            changed = True
        elif path == "/v1/vision/video-tasks" and "file" in case.body:
            case.body["file"] = CLIP
            changed = True
        elif path == "/v1/vision/image-detections" and isinstance(case.body.get("files"), list):
            case.body["files"] = [IMAGE for _ in case.body["files"]]
            changed = True
    if changed:
        # What was substituted keeps the case's generated meaning (positive stays positive): schemathesis
        # cannot validate binary parts, and would otherwise relabel the case.
        case._record_starting_state()


def _documents_503(case) -> bool:
    responses = (case.operation.definition.raw or {}).get("responses") or {}
    return "503" in {str(status) for status in responses}


@schemathesis.check
def documented_503(ctx, response, case):
    if response.status_code != 503:
        return None
    if not _documents_503(case):
        raise AssertionError(f"503 from {case.operation.label}, which does not document 503")
    try:
        code = json.loads(response.content)["error"]["code"]
    except Exception:  # noqa: BLE001 - any non-envelope body is the failure
        code = None
    if code not in SPEC_503:
        raise AssertionError(f"503 with code {code!r}: only {sorted(SPEC_503)} may answer 503")
    if not response.headers.get("retry-after"):
        raise AssertionError("503 without Retry-After")
    return None
