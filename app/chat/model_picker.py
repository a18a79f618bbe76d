"""The chat header's model menu: the models the chat provider offers (a server's own list,
fetched by the window on a worker), the one in use current; choosing one makes it the chat
model from the next message on."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget


class ModelPicker(QComboBox):
    model_chosen = Signal(str)  # the owner chose another model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPicker")
        self.setToolTip("The model Timothy chats with")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(8)
        self.setMaximumWidth(220)
        self.current = ""
        self.activated.connect(self._activated)  # the owner's choices only, not ours
        self.hide()

    def show_models(self, models: list[str], current: str) -> None:
        """Offer `models` with `current` chosen (listed first when the server omits it)."""
        self.current = current
        self.blockSignals(True)
        self.clear()
        self.addItems(models if current in models or not current else [current, *models])
        self.setCurrentText(current)
        self.blockSignals(False)
        self.setToolTip(f"The model Timothy chats with: {current}" if current else "")
        self.setVisible(self.count() > 0)

    def models(self) -> list[str]:
        return [self.itemText(i) for i in range(self.count())]

    def _activated(self, index: int) -> None:
        model = self.itemText(index)
        if model and model != self.current:
            self.model_chosen.emit(model)
