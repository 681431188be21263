"""The memory panel (`memvault ui`) in a real browser: Debian's chromium, driven through chromedriver by
Selenium, against the console script's server on a real port. List and filter, edit and see the file
change, a conflict with an editor's save (nothing lost), forget with a confirmation and restore, what a
prompt is given; the guard's refusals with a plain HTTP client. `MEMVAULT_SCREENSHOTS=DIR` saves each
page at 1280x800 there (docs/panel/ holds the last ones)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault.api import Vault
from memvault.vault.paths import Layout
from tests.conftest import write_notes

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
EXE = Path(sys.executable).with_name("memvault")
TODAY, PAST = dt.date.today(), dt.date.today() - dt.timedelta(days=2)
MEMORY = (
    "# Memory\n\n## Preferences\n\n- Prefers Vue 3 for front ends #frontend [key:: fe] <!-- saved 2026-01-02 -->\n"
    "- Answers in short paragraphs #style\n\n## Notes\n\n- <script>window.pwned = 1</script> stays text\n"
)
DAILY = f"# {TODAY}\n\n## Conversations\n\n- 09:00 planned the release with Ana [conversation:: conv-7]\n" \
        "- 09:30 the cache is warm at boot [conversation:: conv-8]\n"  # fmt: skip
PAST_DAY = f"---\ndate: {PAST}\nindex: the day we chose Postgres\n---\n# {PAST}\n\n## Conversations\n\n" \
           "- 10:00 chose Postgres 16 for billing #db\n"  # fmt: skip

if not (CHROMIUM.exists() and DRIVER.exists()):
    if os.environ.get("MEMVAULT_NEED_BROWSER"):
        raise RuntimeError("chromium and chromedriver are needed: apt-get install -y chromium chromium-driver")
    pytest.skip("no chromium: apt-get install -y chromium chromium-driver (.ci/run does)", allow_module_level=True)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402


@contextlib.contextmanager
def _panel(base: Path) -> Iterator[dict[str, Any]]:
    """A project vault (indexed) and a user vault, and `memvault ui` serving them; its URL (with the token) and port."""
    layout = Layout(base / "vault")
    layout.root.mkdir()
    write_notes(layout, {"MEMORY.md": MEMORY, f"daily/{TODAY}.md": DAILY, f"daily/{PAST}.md": PAST_DAY})
    env = {**os.environ, "MEMVAULT_USER_VAULT": str(base / "user")}
    with Vault(base / "user") as user:
        user.init("en")
        user.remember("Likes terse commit messages", section="Preferences", key="user_commits")
    with Vault(layout.root) as project:
        project.index()
    server = subprocess.Popen([str(EXE), "--vault", str(layout.root), "ui"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "memvault ui printed no URL in 30 s"
        url = server.stdout.readline().split("open ", 1)[1].strip()  # type: ignore[union-attr]
        port = int(url.split(":")[2].split("/")[0])
        yield {"url": url, "port": port, "base": f"http://127.0.0.1:{port}", "layout": layout, "env": env}
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with _panel(tmp_path_factory.mktemp("panel")) as served:
        yield served


@pytest.fixture(scope="module")
def browser(panel: dict[str, Any]) -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,800"):  # fmt: skip
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="memvault-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:  # the page itself 1280x800 (the window's size counts the browser's own bars too)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        driver.get(panel["url"])  # the token, traded for the cookie
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _shot(driver: Any, name: str) -> None:
    folder = os.environ.get("MEMVAULT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def _submit(driver: Any, by: str, what: str) -> None:
    """Click a button or link and wait for the page it loads (a find before that would read the old page)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(by, what).click()
    WebDriverWait(driver, 20).until(expected_conditions.staleness_of(old))


def _rows(driver: Any) -> list[str]:
    return [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#entries tbody tr")]


def _open_entry(driver: Any, panel: dict[str, Any], text: str) -> None:
    driver.get(panel["base"] + "/entries?q=" + urllib.request.quote(text))
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#entries tbody tr")) == 1)
    (row,) = driver.find_elements(By.CSS_SELECTOR, "#entries tbody tr")
    _submit(driver, By.CSS_SELECTOR, f"tr[data-id='{row.get_attribute('data-id')}'] a.open")


def test_entries_of_both_scopes_listed_filtered_and_escaped(browser: Any, panel: dict[str, Any]) -> None:
    browser.get(panel["base"] + "/entries")
    assert browser.title.startswith("Entries")
    rows = _rows(browser)
    assert len(rows) == 7 and any("Likes terse commit messages" in r and "user" in r for r in rows)
    assert any("<script>window.pwned = 1</script> stays text" in r for r in rows)  # shown as text, never run
    assert browser.execute_script("return window.pwned") is None
    _shot(browser, "entries")
    browser.find_element(By.NAME, "tag").send_keys("frontend")
    _submit(browser, By.CSS_SELECTOR, "#filters button")
    assert len(_rows(browser)) == 1 and "Prefers Vue 3" in _rows(browser)[0]
    browser.get(panel["base"] + "/entries?conversation=conv-7")
    assert len(_rows(browser)) == 1 and "planned the release" in _rows(browser)[0]
    browser.get(panel["base"] + f"/entries?scope=project&from={PAST}&to={PAST}")
    assert len(_rows(browser)) == 1 and "Postgres" in _rows(browser)[0]
    browser.get(panel["base"] + "/entries?scope=user")
    assert len(_rows(browser)) == 1


def test_edit_saves_the_entry_into_its_note(browser: Any, panel: dict[str, Any]) -> None:
    _open_entry(browser, panel, "short paragraphs")
    _shot(browser, "entry")
    text = browser.find_element(By.ID, "edit-text")
    assert text.get_attribute("value") == "Answers in short paragraphs"
    text.clear()
    text.send_keys("Answers in one short paragraph")
    browser.find_element(By.ID, "edit-key").send_keys("answer-style")
    from selenium.webdriver.support.select import Select

    Select(browser.find_element(By.ID, "edit-importance")).select_by_value("4")  # seed 003's 1-5
    _submit(browser, By.ID, "save")
    assert "saved MEMORY.md:6" in browser.find_element(By.ID, "done").text
    memory = (panel["layout"].root / "MEMORY.md").read_text()
    assert "- Answers in one short paragraph #style [key:: answer-style] [importance:: 4] <!-- saved" in memory
    assert "Answers in short paragraphs" not in memory
    row = next(r for r in _rows(browser) if "one short paragraph" in r)
    assert " 4 " in f" {row} "  # the list shows it


def test_an_editor_save_after_the_page_loaded_is_a_conflict_and_nothing_is_lost(browser: Any, panel) -> None:
    _open_entry(browser, panel, "cache is warm")
    note = panel["layout"].root / f"daily/{TODAY}.md"
    note.write_text(note.read_text().replace("the cache is warm at boot", "the cache is cold at boot"))
    by_editor = note.read_text()
    text = browser.find_element(By.ID, "edit-text")
    text.clear()
    text.send_keys("the cache is hot")
    _submit(browser, By.ID, "save")
    assert "Conflict" in browser.find_element(By.ID, "conflict").text
    assert "the cache is warm at boot" in browser.find_element(By.ID, "was").text
    assert "the cache is hot" in browser.find_element(By.ID, "asked").text
    assert "the cache is cold at boot" in browser.find_element(By.ID, "there").text
    _shot(browser, "conflict")
    assert note.read_text() == by_editor


def test_forget_asks_first_then_restore_puts_it_back(browser: Any, panel: dict[str, Any]) -> None:
    memory = panel["layout"].root / "MEMORY.md"
    before = memory.read_text()
    _open_entry(browser, panel, "stays text")
    _submit(browser, By.ID, "forget-ask")
    assert browser.title.startswith("Forget?") and memory.read_text() == before  # asked, nothing moved yet
    _submit(browser, By.ID, "forget-yes")
    assert "forgot MEMORY.md:10" in browser.find_element(By.ID, "done").text
    assert "stays text" not in memory.read_text()
    _shot(browser, "trash")
    _submit(browser, By.XPATH, "//table[@id='trash']//tr[contains(., 'stays text')]//button")
    assert "restored" in browser.find_element(By.ID, "done").text
    assert memory.read_text() == before


def test_an_editor_save_while_forget_asks_is_a_conflict_and_nothing_is_forgotten(browser: Any, panel) -> None:
    memory = panel["layout"].root / "MEMORY.md"
    _open_entry(browser, panel, "Prefers Vue 3")
    _submit(browser, By.ID, "forget-ask")
    memory.write_text(memory.read_text().replace("Prefers Vue 3 for", "Prefers Vue 3.5 for"))
    by_editor = memory.read_text()
    _submit(browser, By.ID, "forget-yes")
    assert "Conflict" in browser.find_element(By.ID, "conflict").text
    assert "Prefers Vue 3.5 for" in browser.find_element(By.ID, "there").text
    assert memory.read_text() == by_editor
    assert not any("Vue 3" in f.read_text() for f in panel["layout"].trash_dir.glob("entries/*.md"))


def test_the_prompt_blocks_are_the_context_verbs(browser: Any, tmp_path: Path) -> None:
    """A panel of its own: the other tests' edits on disk (not through a verb) reach a long-lived panel's
    index only at its next walk, so its recall could differ from a fresh CLI's for a while."""
    with _panel(tmp_path) as panel:
        browser.get(panel["url"])
        browser.get(panel["base"] + "/context")
        prompt = "what database for billing?"
        browser.find_element(By.ID, "prompt").send_keys(prompt)
        _submit(browser, By.ID, "show")
        shown = browser.find_element(By.ID, "blocks").get_attribute("textContent")
        _shot(browser, "context")
        cli = subprocess.run([str(EXE), "--vault", str(panel["layout"].root), "context", "--json", prompt],
                             env=panel["env"], capture_output=True, text=True, timeout=120)  # fmt: skip
        expected = json.loads(cli.stdout)
        assert shown == expected["text"] and "<memory-stable>" in shown and "Postgres 16" in shown
        assert len(browser.find_elements(By.CSS_SELECTOR, "#items-stable tbody tr")) == len(expected["stable"])
        assert len(browser.find_elements(By.CSS_SELECTOR, "#items-recall tbody tr")) == len(expected["recall"])
        # what Claude Code's prompt hook adds for the same prompt, and what its session start adds
        payload = {"session_id": "s1", "cwd": str(panel["layout"].root), "hook_event_name": "UserPromptSubmit",
                   "prompt": prompt, "transcript_path": "/nonexistent"}  # fmt: skip
        hooked = subprocess.run([str(EXE), "--vault", str(panel["layout"].root), "hook", "claude-code"],
                                input=json.dumps(payload), env=panel["env"], capture_output=True, text=True,
                                timeout=120)  # fmt: skip
        added = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
        assert browser.find_element(By.ID, "hook-prompt").get_attribute("textContent") == added
        assert "Postgres 16" in added and "<memory-stable>" not in added
        start = browser.find_element(By.ID, "hook-start").get_attribute("textContent")
        assert start == expected["text"].split("</memory-stable>")[0] + "</memory-stable>\n"
        # why it answered, each item's retrievers, and what was left out
        assert expected["tier"] in browser.find_element(By.ID, "why").text
        found_by = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#items-recall td.found_by")]
        assert "vector #" in found_by[0] and "bm25 #" in found_by[0], found_by  # both found the billing note
        assert all("#" in f or f == "newest daily" for f in found_by), found_by
        browser.find_element(By.ID, "prompt").clear()
        browser.find_element(By.ID, "prompt").send_keys("lgtm, ship it")
        _submit(browser, By.ID, "show")
        quiet = subprocess.run([str(EXE), "--vault", str(panel["layout"].root), "hook", "claude-code"],
                               input=json.dumps({**payload, "prompt": "lgtm, ship it"}), env=panel["env"],
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        nothing = browser.find_element(By.ID, "hook-prompt")
        assert (quiet.stdout == "") == nothing.text.startswith("nothing"), (quiet.stdout, nothing.text)
        asked = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#recent-prompts a")]
        assert asked == ["lgtm, ship it", prompt]  # newest first, to pick one again
        _submit(browser, By.LINK_TEXT, prompt)
        assert browser.find_element(By.ID, "blocks").get_attribute("textContent") == expected["text"]


def test_days_a_day_and_health(browser: Any, panel: dict[str, Any]) -> None:
    browser.get(panel["base"] + "/days")
    assert "the day we chose Postgres" in browser.find_element(By.TAG_NAME, "main").text
    _shot(browser, "days")
    browser.find_element(By.LINK_TEXT, str(PAST)).click()
    assert "chose Postgres 16 for billing" in browser.find_element(By.ID, "note").text
    _shot(browser, "note")
    browser.get(panel["base"] + "/health")
    assert "files" in browser.find_element(By.ID, "health-project").text
    _shot(browser, "health")


# the guard, with a plain HTTP client --------------------------------------------------------------------------
def _ask(panel: dict[str, Any], path: str, headers: dict[str, str] | None = None, data: bytes | None = None
         ) -> tuple[int, str]:  # fmt: skip
    request = urllib.request.Request(panel["base"] + path, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _cookie(panel: dict[str, Any]) -> str:
    return f"memvault_ui_{panel['port']}={panel['url'].split('token=')[1]}"


def test_no_token_a_foreign_host_or_origin_and_a_path_out_of_the_vault_are_refused(panel: dict[str, Any]) -> None:
    host = f"127.0.0.1:{panel['port']}"
    cookie = _cookie(panel)
    assert _ask(panel, "/entries")[0] == 403
    assert _ask(panel, "/entries?token=wrong")[0] == 403
    assert _ask(panel, "/entries", {"Cookie": cookie})[0] == 200
    assert _ask(panel, "/entries", {"Cookie": cookie, "Host": f"rebound.example:{panel['port']}"})[0] == 403
    assert _ask(panel, "/entries", {"Cookie": cookie, "Host": "127.0.0.1:1"})[0] == 403
    status, body = _ask(panel, "/entries", {"Cookie": cookie})
    assert "&lt;script&gt;window.pwned" in body and "<script>window" not in body
    form = b"scope=project&id=20990101T000000-abcdef&csrf=x"
    assert _ask(panel, "/restore", {"Cookie": cookie, "Origin": "http://evil.example"}, form)[0] == 403
    assert _ask(panel, "/restore", {"Cookie": cookie}, form)[0] == 403  # no Origin at all
    status, body = _ask(panel, "/restore", {"Cookie": cookie, "Origin": f"http://{host}"}, form)
    assert status == 403 and "form token" in body
    status, body = _ask(panel, "/note?path=../../../etc/passwd", {"Cookie": cookie})
    assert status == 400 and "root:" not in body
    status, _ = _ask(panel, "/entries", {"Cookie": cookie})
    headers = urllib.request.urlopen(urllib.request.Request(panel["base"] + "/entries", headers={"Cookie": cookie}))
    assert "frame-ancestors 'none'" in headers.headers["content-security-policy"]


def test_it_listens_on_the_loopback_address_alone(panel: dict[str, Any]) -> None:
    others = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
    for address in sorted(a for a in others if not a.startswith("127.")):
        with pytest.raises(OSError), socket.create_connection((address, panel["port"]), timeout=2):
            pass
    listening = subprocess.run(["ss", "-ltnH", f"sport = :{panel['port']}"], capture_output=True, text=True)
    if listening.returncode == 0:
        assert [line.split()[3] for line in listening.stdout.splitlines()] == [f"127.0.0.1:{panel['port']}"]
    assert json.dumps(panel["port"])  # a port was printed and parsed


def test_a_second_ui_opens_the_panel_already_serving_the_vault(tmp_path: Path) -> None:
    with _panel(tmp_path) as panel:
        record = panel["layout"].state_dir / "panel.json"
        assert record.stat().st_mode & 0o077 == 0  # its URL carries the token: this user's alone
        again = subprocess.run([str(EXE), "--vault", str(panel["layout"].root), "ui"], env=panel["env"],
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert again.returncode == 0 and again.stdout.split("open ", 1)[1].strip() == panel["url"], again
        assert "already serves this vault" in again.stderr
    assert not record.exists()  # the panel stopped: its record went with it
