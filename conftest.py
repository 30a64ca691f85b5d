# pluggy calls the plugin registered last first: pts.session.plugin's pytest_configure (which turns
# --inventory/--resume into the run's options, --datasheet among them) runs before the
# datasheet plugin reads --datasheet.
pytest_plugins = ["pts.suite.datasheet", "pts.session.plugin"]
