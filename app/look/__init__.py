"""How things look: colours, fonts and the style sheet, icons, and times and hidden characters
as the owner reads them."""
