"""What Timothy does with memories beyond storing them: extraction, remembering, consolidation."""
