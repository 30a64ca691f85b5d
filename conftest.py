pytest_plugins = ["pts.plugin", "pts.suite.datasheet"]
