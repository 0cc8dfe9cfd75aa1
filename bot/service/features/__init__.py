"""The service's features, one module each; ``GameService`` combines them."""
