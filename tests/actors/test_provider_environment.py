"""The provider-configuration variables derived for the 0.16 engine (engine-today row 3)."""

from zcode_acp.actors.transport.backend_process import entry_point, provider_environment

BUILTIN = "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE"
PERSONAL = "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE"


def test_a_desktop_bundle_names_its_own_builtin_table(tmp_path):
    resources = tmp_path / "resources"
    (resources / "glm").mkdir(parents=True)
    entry = resources / "glm" / "zcode.cjs"
    entry.write_text("")
    table = resources / "config" / "provider" / "zcode-builtin.json"
    table.parent.mkdir(parents=True)
    table.write_text("{}")
    assert entry_point(["/usr/bin/node", str(entry), "app-server"]) == str(entry)
    assert provider_environment(str(entry), tmp_path / "home", {}) == {BUILTIN: str(table)}


def test_the_newest_unpacked_table_and_the_personal_file_under_zcode_home(tmp_path):
    home = tmp_path / "home"
    for version in ("3.12.3", "3.15.0"):
        table = home / "v2" / "runtime" / "provider" / "zhipu" / version / "x" / "zcode-builtin.json"
        table.parent.mkdir(parents=True)
        table.write_text("{}")
    (home / "v2" / "provider_config.json").write_text("{}")
    derived = provider_environment(str(tmp_path / "zcode"), home, {})
    assert derived == {BUILTIN: str(table), PERSONAL: str(home / "v2" / "provider_config.json")}


def test_nothing_is_derived_for_files_that_do_not_exist_or_values_the_user_set(tmp_path):
    home = tmp_path / "home"
    assert provider_environment(str(tmp_path / "zcode"), home, {}) == {}
    (home / "v2").mkdir(parents=True)
    (home / "v2" / "provider_config.json").write_text("{}")
    assert provider_environment(str(tmp_path / "zcode"), home, {PERSONAL: "/mine.json"}) == {}
