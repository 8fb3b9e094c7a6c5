"""Points in the plane and axis-aligned bounding boxes."""
