"""Schemathesis hooks of scripts/fuzz.sh: a signed-in caller, objects that exist, and a count of what got through.

Loaded with SCHEMATHESIS_HOOKS=hooks (PYTHONPATH=scripts/fuzz). fuzz.sh passes the gateway's
address (FUZZ_BASE_URL), Mailpit's API (FUZZ_MAIL_API) and where to write the counts (FUZZ_COUNTS).

- The caller: an account registered for the run, whose token every operation gets. Logging out,
  ending every session, a new password and deleting the account all end that token; the next
  request is then refused, and schemathesis asks this provider again (its reauth, `retry_on` 401)
  and replays the request. Each ask registers a new account, so that no operation ever has to log
  in with a password another has changed, or into an account another has deleted.
- The objects: a note, a note with an image attached, a post, a multipart upload, one whose part
  storage holds (for `complete`) and a second session of the current account, made the first time
  an operation names one. A path id that could be one (the right shape) is replaced by the real
  one before the call, so owner-only routes are fuzzed past their 404; a malformed id is left as it
  was drawn, for the 400. What an operation deletes is made again.
- The secrets a body must know: the account's address and password (a login), a refresh token of
  a session made for the case alone (a refresh spends it, a logout ends it), and the tokens of
  mailed links (password reset, e-mail verification, e-mail change), read from Mailpit. A mailed
  token is of an account registered for it alone, so that what confirming it does (a new password
  ending every session, a new address, an address verified, after which asking for a link is a
  409) happens to that account and not to the run's. Secrets go only into cases
  drawn as valid; the others keep their junk, for the 400s and 401s.
- What the document states but schemathesis cannot read or know: a valid case's new address is
  made one no account has (an address registers once: "already registered" is a 400 of the state,
  not of the data), and a string's `x-maxBytes` (a length in bytes of UTF-8, which JSON Schema has
  no word for) is kept, so that a case drawn as valid is one. (`x-wellFormed`, no lone surrogate,
  needs nothing: hypothesis draws no surrogate into a string.)
- The sign-in with the dev provider: `start` gets the provider `dev` and a redirect to the
  gateway's own origin (FRONTEND_ORIGIN), `callback` the `state` of a sign-in just started, and
  every fifth valid `exchange` the login code and verifier of a sign-in made to its end, as a
  browser makes it (a new person at the provider each time, so a new account). One valid unlink of
  an identity in fifteen is sent by an account that has one to unlink (see `_linked_identity`).
- The count: every response the fuzzer got, by operation and status class, written as JSON when
  the run ends (fuzz.sh prints the operations' 2xx counts from it).
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import itertools
import json
import os
import re
import secrets
import time
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

import requests
import schemathesis
from schemathesis import GenerationMode

BASE = os.environ["FUZZ_BASE_URL"].rstrip("/")
MAIL_API = os.environ.get("FUZZ_MAIL_API", "").rstrip("/")
COUNTS_FILE = os.environ.get("FUZZ_COUNTS")
PASSWORD = "fuzz-password-1"
OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")
UPLOAD_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

_serial = itertools.count(1)
# One connection per request, as the fuzzer's own (fuzz.sh's `Connection: close`): the gateway
# closes a connection idle for 5 s and says so (`Keep-Alive: timeout=5`), but requests' pool does
# not read that, and a request it wrote onto a pooled connection as the gateway closed it was reset
# (a login, in one run of ten).
_http = requests.Session()
_http.headers["Connection"] = "close"


def _post(path: str, body: Any, token: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return _http.post(f"{BASE}{path}", json=body, headers=headers, timeout=10)


class Account:
    """One registered account of the run, and the objects of it that operations have needed so far."""

    def __init__(self) -> None:
        self.email = f"fuzz-{os.getpid()}-{next(_serial)}@example.com"
        self.password = PASSWORD
        answer = _post("/api/auth/register", {"email": self.email, "password": self.password})
        answer.raise_for_status()
        session = answer.json()
        self.token: str = session["token"]
        self.user_id = _get_json("/api/auth/me", self.token)["_id"]
        self.objects: dict[str, str] = {}
        self.handed_out = False

    def new_session(self) -> dict[str, Any]:
        """A new login of the account: a session of its own, with its token and refresh token."""
        answer = _post("/api/auth/login", {"email": self.email, "password": self.password})
        answer.raise_for_status()
        return answer.json()

    def object(self, kind: str) -> str:
        """The id of this account's object of that kind, made on first use (and again after a delete)."""
        if kind not in self.objects:
            self.objects[kind] = MAKERS[kind](self)
        return self.objects[kind]


def _get_json(path: str, token: str) -> Any:
    answer = _http.get(f"{BASE}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    answer.raise_for_status()
    return answer.json()


def _make_note(account: Account) -> str:
    answer = _post("/api/notes", {"title": "fuzz note", "body": "made by scripts/fuzz/hooks.py"}, account.token)
    answer.raise_for_status()
    return answer.json()["_id"]


def _make_post(account: Account) -> str:
    body = {"title": "fuzz post", "body": "made by scripts/fuzz/hooks.py", "tags": ["fuzz"]}
    answer = _post("/api/posts", body, account.token)
    answer.raise_for_status()
    return answer.json()["_id"]


def _make_upload(account: Account) -> str:
    body = {"filename": "fuzz.pdf", "contentType": "application/pdf", "size": 10 * 1024 * 1024}
    answer = _post("/api/multipart-uploads", body, account.token)
    answer.raise_for_status()
    return answer.json()["uploadId"]


def _make_session(account: Account) -> str:
    """A second login of the account: a session an operation may end without ending the run's token."""
    sessions = _get_json("/api/auth/sessions", account.new_session()["token"])
    return next(s["id"] for s in sessions if s["current"])


def _put_signed(url: str, headers: dict[str, str], content: bytes) -> None:
    """A PUT to storage through a link the API signed, with exactly the headers it named."""
    _http.put(url, data=content, headers=headers, timeout=10).raise_for_status()


# A 2 x 2 PNG, so that a thumbnail can be made of the attachment too.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGM4YWMDRAwQCgAlPgUBdJmUYAAAAABJRU5ErkJggg=="
)


def _make_attached_note(account: Account) -> str:
    """A note with an uploaded image attached: its attachment link is a 200, not a 404."""
    body = {"filename": "fuzz.png", "contentType": "image/png", "size": len(PNG)}
    link = _post("/api/upload-url", body, account.token)
    link.raise_for_status()
    _put_signed(link.json()["url"], link.json()["headers"], PNG)
    note = {"title": "fuzz note with an attachment", "attachmentKey": link.json()["key"]}
    answer = _post("/api/notes", note, account.token)
    answer.raise_for_status()
    return answer.json()["_id"]


def _make_stored_upload(account: Account) -> str:
    """A multipart upload whose one part storage holds: completing it is a 200 (and again: it is idempotent)."""
    content = b"made by scripts/fuzz/hooks.py\n"
    body = {"filename": "fuzz.txt", "contentType": "text/plain", "size": len(content)}
    answer = _post("/api/multipart-uploads", body, account.token)
    answer.raise_for_status()
    upload_id = answer.json()["uploadId"]
    parts = _post(f"/api/multipart-uploads/{upload_id}/part-urls", {"partNumbers": [1]}, account.token)
    parts.raise_for_status()
    part = parts.json()["parts"][0]
    _put_signed(part["url"], part["headers"], content)
    return upload_id


MAKERS = {
    "note": _make_note,
    "attached-note": _make_attached_note,
    "post": _make_post,
    "upload": _make_upload,
    "stored-upload": _make_stored_upload,
    "session": _make_session,
}

_current: Account | None = None


def current() -> Account:
    """The account whose token the run sends now; a new one when none is yet."""
    global _current
    if _current is None:
        _current = Account()
    return _current


@schemathesis.auth()
class FreshAccount:
    """The Bearer token of the current account; asked again (a 401 came back), a new account's."""

    def get(self, case: Any, context: Any) -> str:
        global _current
        if _current is not None and _current.handed_out:
            _current = None
        account = current()
        account.handed_out = True
        return account.token

    def set(self, case: Any, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


def _is_valid(case: Any) -> bool:
    return case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE


def _ensure(account: Account, kind: str) -> str | None:
    """The object's id, or None when the account can no longer make one (its token was ended)."""
    try:
        return account.object(kind)
    except requests.HTTPError:
        return None


# The object a path's `{id}` or `{uploadId}` names, by the path's beginning (and end): the first that fits.
PATH_OBJECTS = [
    ("/notes/", "/attachment", "attached-note"),
    ("/api/notes/", "/attachment", "attached-note"),
    ("/api/notes/", "", "note"),
    ("/api/posts/", "", "post"),
    ("/api/multipart-uploads/", "/complete", "stored-upload"),
    ("/api/multipart-uploads/", "", "upload"),
    ("/api/auth/sessions/", "", "session"),
]


def _fill_path(case: Any, account: Account) -> None:
    path = case.operation.path
    for prefix, suffix, kind in PATH_OBJECTS:
        if not path.startswith(prefix) or not path.endswith(suffix) or not case.path_parameters:
            continue
        name = "uploadId" if "upload" in kind else "id"
        drawn = case.path_parameters.get(name)
        shape = UPLOAD_ID if "upload" in kind else OBJECT_ID
        if isinstance(drawn, str) and shape.match(drawn):
            real = _ensure(account, kind)
            if real is not None:
                case.path_parameters = {**case.path_parameters, name: real}
        return


def _mail_token(address: str, link: str) -> str | None:
    """The token of the newest mail to `address` whose link goes to that page of the web client, from Mailpit."""
    if not MAIL_API:
        return None
    # The mail goes after the answer: wait for it, up to about 3 s.
    for _ in range(60):
        found = _http.get(f"{MAIL_API}/api/v1/search", params={"query": f"to:{address}"}, timeout=10).json()
        for message in found.get("messages", []):
            text = _http.get(f"{MAIL_API}/api/v1/message/{message['ID']}", timeout=10).json().get("Text", "")
            token = re.search(rf"/{link}\?token=([^&\s\"'<>]+)", text)
            if token:
                return requests.utils.unquote(token.group(1))
        time.sleep(0.05)
    return None


def _set_body(case: Any, **fields: Any) -> None:
    if isinstance(case.body, dict):
        case.body = {**case.body, **{k: v for k, v in fields.items() if v is not None}}


def _mailed_token(op: str) -> str | None:
    """A live token of that operation's mailed link, for a new account (see the module's note)."""
    try:
        account = Account()
    except requests.HTTPError:
        return None
    if op == "confirmEmailVerification":
        # Registration mailed the first link.
        return _mail_token(account.email, "verify-email")
    if op == "confirmPasswordReset":
        _post("/api/auth/password-reset", {"email": account.email})
        return _mail_token(account.email, "reset-password")
    moved = f"moved-{next(_serial)}-{account.email}"
    _post("/api/auth/email-change", {"newEmail": moved, "password": account.password}, account.token)
    return _mail_token(moved, "confirm-email-change")


# The operations whose token comes by mail: an account, a mail and a read of Mailpit each, so only
# every fifth valid case of a phase gets a real one (the first among them), which is enough to get
# past the 400.
MAILED = {"confirmPasswordReset", "confirmEmailVerification", "confirmEmailChange"}
_drawn: dict[tuple[str, str], int] = defaultdict(int)


def _one_in(case: Any, every: int) -> bool:
    """Whether this valid case is the first, or one in `every` after it, of its operation in this phase."""
    key = (case.operation.label, str(case.meta.phase.name))
    _drawn[key] += 1
    return _drawn[key] % every == 1


def _every_fifth(case: Any) -> bool:
    return _one_in(case, 5)


def _fill_body(case: Any, account: Account) -> None:
    """What a valid body must know of the account: its password, its refresh token, a mailed token."""
    op = case.operation.definition.raw.get("operationId")
    if op in ("changePassword", "deleteAccount", "requestEmailChange"):
        key = {"changePassword": "currentPassword"}.get(op, "password")
        _set_body(case, **{key: account.password})
        if op == "changePassword" and isinstance(case.body, dict) and isinstance(case.body.get("newPassword"), str):
            # The run's next account is a new one; this one's password only matters to its own later cases.
            account.password = case.body["newPassword"]
    elif op == "login":
        _set_body(case, email=account.email, password=account.password)
    elif op in ("refresh", "logout"):
        # A refresh token of a session of its own: each refresh spends the token it is given and
        # each logout ends its session, so one shared token would be spent by the first of them,
        # and every later valid case refused for it, which schemathesis reads as a schema mismatch.
        try:
            session = account.new_session()
        except requests.HTTPError:
            # The account is gone, or its password was changed by an earlier case, and the run has
            # not been refused for it yet: a session of a new account, for this case alone.
            session = Account().new_session()
        _set_body(case, refreshToken=session["refreshToken"])
        # Cookie mode reads the token from a cookie this caller does not have.
        if case.headers and "X-Refresh-Token" in case.headers:
            case.headers = {k: v for k, v in case.headers.items() if k != "X-Refresh-Token"}
    elif op in MAILED:
        if _every_fifth(case):
            _set_body(case, token=_mailed_token(op))
    elif op == "users" and isinstance(case.query, dict):
        case.query = {**case.query, "ids": account.user_id}


# The fields of a body that name a new account's address: each address registers once.
NEW_ADDRESSES = {"register": "email"}
EMAIL_MAX = 254


def _unused_address(drawn: str) -> str:
    """The drawn address with a tag of this run's before its `@` (`+f<n>`), so no account has it.

    The tag is the last thing before the only `@`, so two tags give two addresses, once trimmed and
    lowercased too. Past the document's length, the local part gives up its last characters.
    """
    at = drawn.find("@")
    if at < 0:
        return drawn
    tag = f"+f{next(_serial)}"
    local, rest = drawn[:at], drawn[at:]
    over = len(local) + len(tag) + len(rest) - EMAIL_MAX
    if over > 0:
        local = local[: max(0, len(local) - over)]
    return f"{local}{tag}{rest}"


_document: dict[str, Any] | None = None


def _body_fields(case: Any) -> dict[str, Any]:
    """The properties of the operation's JSON body schema, as the document states them."""
    global _document
    if _document is None:
        _document = _http.get(f"{BASE}/openapi.json", timeout=10).json()
    body = case.operation.definition.raw.get("requestBody", {})
    schema = body.get("content", {}).get("application/json", {}).get("schema", {})
    ref = schema.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        schema = _document["components"]["schemas"].get(ref.rsplit("/", 1)[1], {})
    return schema.get("properties", {})


def _fits_bytes(text: str, limit: int, shortest: int) -> str:
    while len(text.encode("utf-8", "surrogatepass")) > limit and len(text) > shortest:
        text = text[:-1]
    return text


def _keep_unsaid_rules(case: Any) -> None:
    """What JSON Schema cannot say or schemathesis cannot know, kept in a case drawn as valid: the body's own fields."""
    if not isinstance(case.body, dict):
        return
    op = case.operation.definition.raw.get("operationId")
    fields = dict(case.body)
    for name, rule in _body_fields(case).items():
        value = fields.get(name)
        if not isinstance(value, str):
            continue
        if "x-maxBytes" in rule:
            value = _fits_bytes(value, rule["x-maxBytes"], rule.get("minLength", 0))
        fields[name] = value
    if NEW_ADDRESSES.get(op) in fields and isinstance(fields[NEW_ADDRESSES[op]], str):
        fields[NEW_ADDRESSES[op]] = _unused_address(fields[NEW_ADDRESSES[op]])
    case.body = fields


def _fill_sign_in(case: Any) -> None:
    op = case.operation.definition.raw.get("operationId")
    if op == "startOidcSignIn":
        case.path_parameters = {**(case.path_parameters or {}), "provider": "dev"}
        case.query = {**(case.query or {}), "redirect": f"{BASE}/"}
    elif op == "oidcCallback":
        case.path_parameters = {**(case.path_parameters or {}), "provider": "dev"}
        started = _http.get(
            f"{BASE}/api/auth/oidc/dev/start",
            params={"challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "redirect": f"{BASE}/"},
            allow_redirects=False,
            timeout=10,
        )
        state = parse_qs(urlparse(started.headers.get("Location", "")).query).get("state", [None])[0]
        if state is not None:
            case.query = {**(case.query or {}), "state": state}
    elif op == "exchangeOidcCode" and _every_fifth(case):
        signed_in = _login_code()
        if signed_in is not None:
            code, verifier, _ = signed_in
            _set_body(case, code=code, verifier=verifier)
    elif op == "unlinkIdentity" and OBJECT_ID.match(str((case.path_parameters or {}).get("id", ""))):
        if not _one_in(case, 15):
            return
        # Another account's token: the run's own has no identity to unlink. Making one takes a second
        # (a sign-in, a reset, a login), so one case in fifteen.
        linked = _linked_identity()
        if linked is not None:
            token, identity = linked
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}
            case.path_parameters = {**case.path_parameters, "id": identity}


def _login_code() -> tuple[str, str, str] | None:
    """A sign-in at the dev provider as a browser makes it (a new name each time): its login code, verifier and name.

    The start, the provider's login page with a name typed in, its consent (answered at once), the
    callback, and the `#code=` of the redirect back to the web client; each redirect read, not followed.
    """
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = requests.Session()

    def step(url: str, **kwargs: Any) -> str:
        answer = browser.request(kwargs.pop("method", "GET"), url, allow_redirects=False, timeout=10, **kwargs)
        return urljoin(url, answer.headers.get("Location", ""))

    try:
        at = step(f"{BASE}/api/auth/oidc/dev/start", params={"challenge": challenge, "redirect": f"{BASE}/"})
        at = step(at)
        name = f"fuzz-{os.getpid()}-{next(_serial)}"
        if "/interaction/" in at:
            at = step(f"{at}/login", method="POST", data={"name": name})
        for _ in range(6):
            if at.startswith(BASE):
                break
            at = step(at)
        back = step(at)  # our callback: to the web client with #code=
    except requests.RequestException:
        return None
    code = parse_qs(urlparse(back).fragment).get("code", [None])[0]
    return None if code is None else (code, verifier, name)


def _linked_identity() -> tuple[str, str] | None:
    """A token and an identity it may unlink: of an account a sign-in made, given a password since.

    An account's last way in cannot be unlinked (409), and the dev provider never vouches for an
    address, so no sign-in links to an account that has a password: the one it made gets a password
    by the reset its address (`<name>@dev.invalid`, which Mailpit keeps) is sent, then logs in.
    """
    signed_in = _login_code()
    if signed_in is None:
        return None
    code, verifier, name = signed_in
    address = f"{name}@dev.invalid"
    if _post("/api/auth/oidc/exchange", {"code": code, "verifier": verifier}).status_code != 200:
        return None
    _post("/api/auth/password-reset", {"email": address})
    token = _mail_token(address, "reset-password")
    if token is None or not _post("/api/auth/password-reset/confirm", {"token": token, "newPassword": PASSWORD}).ok:
        return None
    login = _post("/api/auth/login", {"email": address, "password": PASSWORD})
    if not login.ok:
        return None
    session = login.json()["token"]
    return session, _get_json("/api/auth/identities", session)[0]["_id"]


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if not _is_valid(case):
        return
    account = current()
    _keep_unsaid_rules(case)
    _fill_path(case, account)
    _fill_body(case, account)
    _fill_sign_in(case)


_counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    status = response.status_code
    # A probe with a method the operation does not have reached another route (an OPTIONS preflight, a 405).
    if case.method.upper() == case.operation.method.upper():
        _counts[case.operation.label][f"{status // 100}xx"] += 1
    op = case.operation.definition.raw.get("operationId")
    # What a request deleted is made again for the next one that names it.
    if case.method.upper() == "DELETE" and 200 <= status < 300 and _current is not None:
        for kind, made in list(_current.objects.items()):
            if made in case.formatted_path:
                del _current.objects[kind]


@atexit.register
def _write_counts() -> None:
    if COUNTS_FILE:
        with open(COUNTS_FILE, "w", encoding="utf-8") as out:
            json.dump(_counts, out, indent=1, sort_keys=True)
