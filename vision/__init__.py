"""Perception library: frame -> tiles.  Imports numpy and cv2; onnxruntime only in runtime.py."""
