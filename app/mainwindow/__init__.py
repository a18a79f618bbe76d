"""The main window and its chrome: the banner, the status bar, the menus, the remembered state."""
