"""The pure rules core: tiles, the card language, matching, Siamese state and scoring.

Standard library only: this package never imports vision, cv2, numpy or flask.
"""
