pytest_plugins = ["pts.plugin"]
